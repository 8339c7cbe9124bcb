import { autocannon } from "./autocannon.ts";
import { csv } from "./csv.ts";
import { k6 } from "./k6.ts";
import {
  concurrencyByLittle,
  LITTLE_TOLERANCE,
  type LoadTestFormat,
  LoadTestFileError,
  type LoadTestReading,
  NOT_GIVEN,
} from "./load-test.ts";
import { probeOutput } from "./probe-output.ts";
import { vegeta } from "./vegeta.ts";
import { wrk } from "./wrk.ts";

/** Every format probe -from reads, one file each; the first that recognizes a file reads it. */
export const LOAD_TEST_FORMATS: readonly LoadTestFormat[] = [autocannon, k6, vegeta, wrk, probeOutput, csv];

/** A file's steps and what it lacks, with the format that read it; a LoadTestFileError naming the file otherwise. */
export function readLoadTest(file: string, text: string): LoadTestReading & { readonly format: string } {
  const format = LOAD_TEST_FORMATS.find((candidate) => candidate.recognizes(text));
  if (format === undefined) {
    throw new LoadTestFileError(`${file}: not a load test the probe reads (${LOAD_TEST_FORMATS.map((known) => known.name).join("; ")})`);
  }
  try {
    const reading = format.read(text);
    reading.steps.forEach((step, index) => {
      // A run the fit cannot use (nothing answered, no time measured) is the file's problem, named, not a fit of nothing.
      const broken = (["throughputPerSec", "meanLatencyMs", "concurrency"] as const).find(
        (key) => !(step[key] > 0 && Number.isFinite(step[key])),
      );
      if (broken !== undefined)
        throw new LoadTestFileError(`${format.name}: run ${index + 1} has ${broken} ${step[broken]}, not a figure above 0`);
      if (!(step.errors >= 0 && step.errors <= step.requests))
        throw new LoadTestFileError(`${format.name}: run ${index + 1} has ${step.errors} errors of ${step.requests} answers`);
    });
    return { ...littleChecked(reading), format: format.name };
  } catch (error) {
    if (error instanceof LoadTestFileError) throw new LoadTestFileError(`${file}: ${error.message}`);
    throw error;
  }
}

/**
 * Users that never pause (a closed loop) are all in the service, so throughput × mean latency is
 * their number N (Little's law). A run whose latencies make it far more counted time the service
 * did not hold the request (autocannon against a server that closes each connection: measured
 * 265 ms at one connection and 16.8 answers a second, against gunicorn's 50 ms): its mean latency
 * is taken as N ÷ throughput instead and its percentiles are not used. A run whose figures make it
 * far fewer did not keep its N users in the service (refused connections, a client short of time),
 * and rows of users who may pause (a sheet's) hold fewer or more: their latencies stand, and their
 * concurrency is Little's law's. Each such run is named.
 */
function littleChecked(reading: LoadTestReading): LoadTestReading {
  if (reading.users === undefined) return reading;
  const assumed: string[] = [];
  const paused: number[] = [];
  const steps = reading.steps.map((step) => {
    const inService = (step.throughputPerSec * step.meanLatencyMs) / 1000;
    if (Math.abs(inService / step.concurrency - 1) <= LITTLE_TOLERANCE) return step;
    const byLittle = { ...step, concurrency: concurrencyByLittle(step.throughputPerSec, step.meanLatencyMs) };
    if (reading.users === "may pause") {
      paused.push(step.concurrency);
      return byLittle;
    }
    if (inService < step.concurrency) {
      assumed.push(
        `the run at ${step.concurrency}: throughput × mean latency makes ${inService.toPrecision(3)} in the service, fewer than its ` +
          `${step.concurrency} users (refused connections, a client short of time): its concurrency is Little's law's`,
      );
      return byLittle;
    }
    assumed.push(
      `the run at ${step.concurrency}: throughput × mean latency makes ${inService.toPrecision(3)} in the service, not its ${step.concurrency} ` +
        "users: its latencies count time outside the service (a connection opened per request, say); taken as users ÷ throughput " +
        "(Little's law), its percentiles not used",
    );
    return {
      ...step,
      meanLatencyMs: (step.concurrency * 1000) / step.throughputPerSec,
      p50Ms: NOT_GIVEN,
      p90Ms: NOT_GIVEN,
      p99Ms: NOT_GIVEN,
    };
  });
  if (paused.length > 0)
    assumed.push(
      `users ${paused.join(", ")}: throughput × mean latency is far from the users in those rows ` +
        "(they pause between requests): their concurrency is Little's law's, the requests in the service",
    );
  return { ...reading, steps, assumed: [...reading.assumed, ...assumed] };
}

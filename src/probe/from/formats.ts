import { autocannon } from "./autocannon.ts";
import { csv } from "./csv.ts";
import { k6 } from "./k6.ts";
import { type LoadTestFormat, LoadTestFileError, type LoadTestReading } from "./load-test.ts";
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
      const broken = (["concurrency", "throughputPerSec", "meanLatencyMs"] as const).find(
        (key) => !(step[key] > 0 && Number.isFinite(step[key])),
      );
      if (broken !== undefined)
        throw new LoadTestFileError(`${format.name}: run ${index + 1} has ${broken} ${step[broken]}, not a figure above 0`);
    });
    return { ...reading, format: format.name };
  } catch (error) {
    if (error instanceof LoadTestFileError) throw new LoadTestFileError(`${file}: ${error.message}`);
    throw error;
  }
}

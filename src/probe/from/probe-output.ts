import { lackedPercentiles, type LoadTestFormat, NOT_GIVEN } from "./load-test.ts";

const NAME = "thundering-herd probe's output";

/** One step as the probe prints it (probe-run.ts, formatStep). */
const STEP =
  /^concurrency +([\d.]+): +([\d.]+) req\/s, p50 (n\/a|[\d.]+ ms), p90 (n\/a|[\d.]+ ms), p99 (n\/a|[\d.]+ ms), errors (\d+) \(([\d.]+) %\)$/gm;

const latency = (text: string) => (text === "n/a" ? NOT_GIVEN : Number.parseFloat(text));

/**
 * The probe's own printed steps, kept from an earlier probe (its stdout): refitted without
 * loading the service again. Its closed loop has no pause, so the mean latency it does not print
 * is concurrency ÷ throughput (Little's law); answers are counted back from the error share
 * where there were errors.
 */
export const probeOutput: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => new RegExp(STEP.source, "m").test(text),
  read: (text) => {
    const printed = [...text.matchAll(STEP)].map((match) => {
      const [concurrency, throughputPerSec] = [Number(match[1]), Number(match[2])];
      const [errors, share] = [Number(match[6]), Number(match[7])];
      return {
        concurrency,
        throughputPerSec,
        meanLatencyMs: (concurrency * 1000) / throughputPerSec,
        p50Ms: latency(match[3]!),
        p90Ms: latency(match[4]!),
        p99Ms: latency(match[5]!),
        // The share is printed to 0.1 %: without errors the answers do not matter to the fit or the error rate.
        requests: share > 0 ? Math.round(errors / (share / 100)) : Math.max(1, Math.round(throughputPerSec)),
        errors,
      };
    });
    // A step the probe measured again (a dip: probe-run.ts) is printed twice: the later replaces the first, as in the probe.
    const steps = [...new Map(printed.map((step) => [step.concurrency, step])).values()];
    return {
      steps,
      assumed: [
        "mean latency: not in the probe's lines, taken as concurrency ÷ throughput (Little's law: its users do not pause)",
        ...lackedPercentiles(steps),
      ],
    };
  },
};

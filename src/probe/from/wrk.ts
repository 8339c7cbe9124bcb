import { concurrencyByLittle, lackedPercentiles, LITTLE_ASSUMED, type LoadTestFormat, LoadTestFileError, NOT_GIVEN } from "./load-test.ts";

const NAME = "wrk or wrk2 output (with --latency)";

/** wrk's units: us, ms, s, m, h. */
const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function durationMs(value: string, unit: string): number {
  return Number(value) * UNIT_MS[unit]!;
}

/** A wrk count: 1234, or 1.23k, 4.56M as it shortens large ones. */
function count(text: string): number {
  const match = /^([\d.]+)([kMG]?)$/.exec(text)!;
  return Number(match[1]) * { "": 1, k: 1e3, M: 1e6, G: 1e9 }[match[2] as "" | "k" | "M" | "G"];
}

const LATENCY = /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s/m;
/** A percentile line of --latency: `50%   41.16ms` (wrk) or `50.000%    1.23ms` (wrk2). */
const PERCENTILE = /^\s*(50|90|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$/gm;

/**
 * wrk's text output (https://github.com/wg/wrk) and wrk2's (https://github.com/giltene/wrk2).
 * wrk is a closed loop of `connections` without pause: the requests in the service are its
 * connections. wrk2 sends at a fixed rate (-R), an open loop: its concurrency is Little's law's.
 * The percentiles are those of --latency; without it the file has none.
 */
export const wrk: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => /^Running .+ test @ /m.test(text) && /^Requests\/sec:/m.test(text),
  read: (text) => {
    const line = (pattern: RegExp, what: string) => {
      const match = pattern.exec(text);
      if (match === null) throw new LoadTestFileError(`${NAME}: no ${what} line`);
      return match;
    };
    const connections = Number(line(/(\d+) threads and (\d+) connections/, "threads and connections")[2]);
    const [, meanText, meanUnit] = line(LATENCY, "Latency")!;
    const meanLatencyMs = durationMs(meanText!, meanUnit!);
    const [, requestsText, windowText, windowUnit] = line(/^\s*([\d.]+[kMG]?) requests in ([\d.]+)(us|ms|s|m|h)/m, "requests in");
    const requests = count(requestsText!);
    const throughputPerSec = requests / (durationMs(windowText!, windowUnit!) / 1000);
    // wrk2 -U prints its uncorrected percentiles after the recorded ones: only those before them count.
    const uncorrected = text.indexOf("Uncorrected Latency");
    const recorded = uncorrected < 0 ? text : text.slice(0, uncorrected);
    const percentiles = new Map([...recorded.matchAll(PERCENTILE)].map((match) => [match[1]!, durationMs(match[2]!, match[3]!)]));
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
    const failedConnections = socket === null ? 0 : socket.slice(1).reduce((sum, value) => sum + Number(value), 0);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
    // wrk2 calibrates each thread to its rate, and says where its histogram comes from; wrk has no rate to keep.
    const openLoop = /Thread calibration:|HdrHistogram|Uncorrected Latency/.test(text);
    const steps = [
      {
        concurrency: openLoop ? concurrencyByLittle(throughputPerSec, meanLatencyMs) : connections,
        throughputPerSec,
        meanLatencyMs,
        p50Ms: percentiles.get("50") ?? NOT_GIVEN,
        p90Ms: percentiles.get("90") ?? NOT_GIVEN,
        p99Ms: percentiles.get("99") ?? NOT_GIVEN,
        requests: requests + failedConnections,
        errors: failedConnections + non2xx,
      },
    ];
    return {
      steps,
      ...(openLoop ? {} : { users: "never pause" as const }),
      assumed: [...(openLoop ? [LITTLE_ASSUMED] : []), ...lackedPercentiles(steps, " (run wrk with --latency)")],
    };
  },
};

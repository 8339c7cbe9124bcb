import {
  concurrencyByLittle,
  field,
  jsonObject,
  LITTLE_ASSUMED,
  type LoadTestFormat,
  LoadTestFileError,
  requiredNumber,
} from "./load-test.ts";

const NAME = "vegeta report -type=json";

const NS_PER_MS = 1e6;

/**
 * vegeta's JSON report (https://github.com/tsenart/vegeta, `vegeta report -type=json`): an
 * attack at a fixed rate, an open loop, so the requests in the service are Little's law's.
 * Times are nanoseconds; every answer came within `duration` (the attack) plus `wait` (the last
 * answers after it); `success` is the share of 2xx and 3xx answers.
 */
export const vegeta: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => {
    const json = jsonObject(text);
    return json !== undefined && "latencies" in json && "success" in json && "status_codes" in json;
  },
  read: (text) => {
    const json = jsonObject(text)!;
    const number = (...path: string[]) => requiredNumber(field(json, ...path), path.join("."), NAME);
    const share = (value: number) => {
      if (value > 1) throw new LoadTestFileError(`${NAME}: success is ${value}, not a share from 0 to 1`);
      return value;
    };
    const requests = number("requests");
    const throughputPerSec = requests / ((number("duration") + number("wait")) / 1e9);
    const meanLatencyMs = number("latencies", "mean") / NS_PER_MS;
    return {
      steps: [
        {
          concurrency: concurrencyByLittle(throughputPerSec, meanLatencyMs),
          throughputPerSec,
          meanLatencyMs,
          p50Ms: number("latencies", "50th") / NS_PER_MS,
          p90Ms: number("latencies", "90th") / NS_PER_MS,
          p99Ms: number("latencies", "99th") / NS_PER_MS,
          requests,
          errors: Math.round(requests * (1 - share(number("success")))),
        },
      ],
      assumed: [LITTLE_ASSUMED],
    };
  },
};

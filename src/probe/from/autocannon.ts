import { field, jsonObject, type LoadTestFormat, requiredNumber } from "./load-test.ts";

const NAME = "autocannon --json";

/**
 * autocannon's JSON result (https://github.com/mcollina/autocannon, "--json"): a closed loop of
 * `connections`, each with `pipelining` requests in flight and no pause, so the requests in the
 * service are connections × pipelining. Latencies are whole milliseconds; answers per second are
 * every answer (`latency.totalCount`, any status) over the run's `duration` (seconds).
 */
export const autocannon: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => {
    const json = jsonObject(text);
    return json !== undefined && "connections" in json && "latency" in json && "requests" in json;
  },
  read: (text) => {
    const json = jsonObject(text)!;
    const number = (...path: string[]) => requiredNumber(field(json, ...path), path.join("."), NAME);
    const answers = number("latency", "totalCount");
    const optional = (key: string) => (typeof json[key] === "number" ? (json[key] as number) : 0);
    // Its `errors` are connections that failed (refused, reset, timed out: `timeouts` is a part of them); `non2xx` are answers.
    const failedConnections = optional("errors");
    return {
      steps: [
        {
          concurrency: number("connections") * (typeof json.pipelining === "number" ? json.pipelining : 1),
          throughputPerSec: answers / number("duration"),
          meanLatencyMs: number("latency", "mean"),
          p50Ms: number("latency", "p50"),
          p90Ms: number("latency", "p90"),
          p99Ms: number("latency", "p99"),
          requests: answers + failedConnections,
          errors: failedConnections + optional("non2xx"),
        },
      ],
      users: "never pause",
      assumed: [],
    };
  },
};

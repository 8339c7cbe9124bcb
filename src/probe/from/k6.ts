import {
  concurrencyByLittle,
  field,
  jsonObject,
  lackedPercentiles,
  LITTLE_ASSUMED,
  type LoadTestFormat,
  NOT_GIVEN,
  requiredNumber,
} from "./load-test.ts";

const NAME = "k6 --summary-export (or handleSummary's JSON)";

/**
 * k6's end-of-test summary (https://grafana.com/docs/k6/latest/results-output/end-of-test/):
 * `--summary-export` writes each metric's figures directly (`http_req_duration.avg`), the JSON
 * handleSummary gets nests them under `values`. Its virtual users may sleep between requests, so
 * the requests in the service are Little's law's. k6 keeps p(90) and p(95) by default; p(99)
 * only with --summary-trend-stats. Failed requests are http_req_failed's `passes` (its true values).
 */
export const k6: LoadTestFormat = {
  name: NAME,
  recognizes: (text) => field(jsonObject(text), "metrics", "http_req_duration") !== undefined,
  read: (text) => {
    const metrics = field(jsonObject(text), "metrics");
    const figure = (metric: string, stat: string) => field(metrics, metric, "values", stat) ?? field(metrics, metric, stat);
    const number = (metric: string, stat: string) => requiredNumber(figure(metric, stat), `metrics.${metric}.${stat}`, NAME);
    const throughputPerSec = number("http_reqs", "rate");
    const meanLatencyMs = number("http_req_duration", "avg");
    const percentile = (stat: string) =>
      typeof figure("http_req_duration", stat) === "number" ? number("http_req_duration", stat) : NOT_GIVEN;
    const [p50Ms, p90Ms, p99Ms] = [percentile("med"), percentile("p(90)"), percentile("p(99)")];
    const failed = figure("http_req_failed", "passes");
    const steps = [
      {
        concurrency: concurrencyByLittle(throughputPerSec, meanLatencyMs),
        throughputPerSec,
        meanLatencyMs,
        p50Ms,
        p90Ms,
        p99Ms,
        requests: number("http_reqs", "count"),
        errors: typeof failed === "number" ? failed : 0,
      },
    ];
    return {
      steps,
      assumed: [
        LITTLE_ASSUMED,
        ...lackedPercentiles(steps, ' (k6 --summary-trend-stats "avg,med,p(90),p(99)")'),
        ...(typeof failed === "number" ? [] : ["errors: no http_req_failed metric, counted as none"]),
      ],
    };
  },
};

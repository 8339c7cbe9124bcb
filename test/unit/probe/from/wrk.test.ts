import { describe, expect, it } from "vitest";
import { wrk } from "../../../../src/probe/from/wrk.ts";
import { loadTestFixture } from "./fixture.ts";

const WRK2 = `Running 30s test @ http://127.0.0.1:8080/api
  2 threads and 100 connections
  Thread calibration: mean lat.: 21.3ms, rate sampling interval: 10ms
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    25.00ms    3.10ms  61.44ms   90.12%
    Req/Sec   103.12     12.40   150.00     70.00%
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%   24.51ms
 75.000%   26.00ms
 90.000%   28.10ms
 99.000%   40.35ms
 99.900%   55.00ms
  6000 requests in 30.00s, 0.88MB read
  Socket errors: connect 0, read 0, write 0, timeout 3
  Non-2xx or 3xx responses: 9
Requests/sec:    199.98
Transfer/sec:     30.00KB
`;

describe("wrk and wrk2 output", () => {
  it("reads a real wrk run: its connections in the service, its --latency percentiles", () => {
    const text = loadTestFixture("wrk-8.txt");
    expect(wrk.recognizes(text)).toBe(true);
    const { steps, assumed } = wrk.read(text);
    expect(steps[0]).toMatchObject({
      concurrency: 8,
      p50Ms: 41.26,
      p90Ms: 41.95,
      p99Ms: 44.37,
      meanLatencyMs: 41.35,
      requests: 576,
      errors: 0,
    });
    expect(steps[0]!.throughputPerSec).toBeCloseTo(576 / 3, 6);
    expect(assumed).toEqual([]);
  });

  it("takes wrk2's fixed rate as an open loop: Little's law's concurrency, socket errors and non-2xx answers as errors", () => {
    const { steps, assumed } = wrk.read(WRK2);
    expect(steps[0]).toMatchObject({ concurrency: 5, p50Ms: 24.51, p99Ms: 40.35, requests: 6003, errors: 12 });
    expect(assumed).toEqual([expect.stringContaining("Little's law")]);
  });

  it("names the percentiles a run without --latency lacks, shown as n/a and read as constant service times", () => {
    const withoutLatency = loadTestFixture("wrk-8.txt").replace(/ {2}Latency Distribution[\s\S]*?(?= {2}\d+ requests in)/, "");
    const { steps, assumed } = wrk.read(withoutLatency);
    expect(Number.isNaN(steps[0]!.p50Ms)).toBe(true);
    expect(assumed).toEqual([
      "p50, p90, p99: not in the file, shown as n/a; the fit takes the service times as constant (no spread to read) (run wrk with --latency)",
    ]);
  });
});

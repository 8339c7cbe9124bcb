import { describe, expect, it } from "vitest";
import { LOAD_TEST_FORMATS, readLoadTest } from "../../../../src/probe/from/formats.ts";
import { LoadTestFileError } from "../../../../src/probe/from/load-test.ts";
import { loadTestFixture } from "./fixture.ts";

describe("probe -from's formats", () => {
  it("picks the one format that recognizes each file, and names the file and every format for one it does not read", () => {
    const files = ["autocannon-8.json", "k6-summary-export.json", "vegeta-report.json", "wrk-8.txt", "probe-gunicorn.txt", "steps.csv"];
    for (const file of files) {
      const text = loadTestFixture(file);
      expect(
        LOAD_TEST_FORMATS.filter((format) => format.recognizes(text)),
        file,
      ).toHaveLength(1);
    }
    expect(readLoadTest("a.json", loadTestFixture("wrk-8.txt")).format).toBe("wrk or wrk2 output (with --latency)");
    expect(() => readLoadTest("notes.txt", "hello")).toThrow(LoadTestFileError);
    expect(() => readLoadTest("notes.txt", "hello")).toThrow(/^notes\.txt: not a load test the probe reads \(autocannon --json; k6/);
    expect(() => readLoadTest("x.json", '{"connections": 1, "latency": {}, "requests": {}}')).toThrow(/^x\.json: autocannon --json: /);
  });
});

describe("a run the fit cannot use", () => {
  it("is refused with the file, the format and the figure, not fitted: an autocannon run of no time, a CSV row of no throughput", () => {
    const json = JSON.parse(loadTestFixture("autocannon-8.json"));
    expect(() => readLoadTest("a.json", JSON.stringify({ ...json, duration: 0 }))).toThrow(
      "a.json: autocannon --json: run 1 has throughputPerSec Infinity, not a figure above 0",
    );
    expect(() => readLoadTest("s.csv", "concurrency,rps,latency\n1,10,20\n2,0,20\n")).toThrow(
      /^s\.csv: CSV .*: run 2 has throughputPerSec 0/,
    );
  });
});

describe("Little's law, held to each run", () => {
  it("takes a closed loop's latency as users ÷ throughput where the tool's latencies count time outside the service, and says so", () => {
    // autocannon against gunicorn's sync workers, as measured: 265 ms mean at one connection and 16.8 answers a second.
    const json = JSON.parse(loadTestFixture("autocannon-8.json"));
    const slow = { ...json, connections: 1, duration: 1, latency: { ...json.latency, mean: 265, totalCount: 17 } };
    const { steps, assumed } = readLoadTest("a.json", JSON.stringify(slow));
    expect(steps[0]!.meanLatencyMs).toBeCloseTo(1000 / 17, 9);
    expect(Number.isNaN(steps[0]!.p50Ms)).toBe(true);
    expect(assumed).toEqual([
      expect.stringMatching(/^the run at 1: throughput × mean latency makes 4\.5\d* in the service, not its 1 users/),
    ]);
    // A real run keeps its own figures: 8 connections, throughput × mean latency within 25 % of 8.
    expect(readLoadTest("b.json", loadTestFixture("autocannon-8.json")).assumed).toEqual([]);
  });

  it("takes a sheet's rows whose users pause as Little's law's concurrency, and says so", () => {
    const { steps, assumed } = readLoadTest("s.csv", "users,rps,latency_ms\n10,50,40\n4,100,40\n");
    expect(steps.map((step) => step.concurrency)).toEqual([2, 4]);
    expect(assumed).toContain(
      "users 10: throughput × mean latency is far from the users in those rows (they pause between requests): their concurrency is Little's law's, the requests in the service",
    );
  });
});

describe("what review found (each was read wrong before)", () => {
  const wrk8 = loadTestFixture("wrk-8.txt");

  it("takes wrk2 without --latency as an open loop, by its calibration lines, and only its recorded percentiles with -U", () => {
    const wrk2 =
      "Running 30s test @ http://127.0.0.1:8080/api\n  2 threads and 100 connections\n  Thread calibration: mean lat.: 21.3ms, rate sampling interval: 10ms\n" +
      "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency    25.00ms    3.10ms  61.44ms   90.12%\n" +
      "  6000 requests in 30.00s, 0.88MB read\nRequests/sec:    199.98\n";
    expect(readLoadTest("w.txt", wrk2).steps[0]).toMatchObject({ concurrency: 5, meanLatencyMs: 25 });
    const withUncorrected = `${wrk2}  Latency Distribution (HdrHistogram - Recorded Latency)\n 50.000%   24.51ms\n 90.000%   28.10ms\n 99.000%   40.35ms\n  Uncorrected Latency (measured without taking delayed starts into account)\n 50.000%    9.00ms\n 90.000%   10.00ms\n 99.000%   12.00ms\n`;
    expect(readLoadTest("w.txt", withUncorrected).steps[0]).toMatchObject({ p50Ms: 24.51, p90Ms: 28.1, p99Ms: 40.35 });
  });

  it("keeps a closed loop's latencies where too few were in the service (refused connections), taking Little's concurrency", () => {
    const refused = wrk8.replace("1 threads and 8 connections", "1 threads and 64 connections");
    const { steps, assumed } = readLoadTest("w.txt", refused);
    expect(steps[0]!.meanLatencyMs).toBe(41.35);
    expect(steps[0]!.concurrency).toBeCloseTo((192 * 41.35) / 1000, 2);
    expect(assumed).toEqual([expect.stringMatching(/^the run at 64: .* fewer than its 64 users .*: its concurrency is Little's law's$/)]);
  });

  it("refuses a negative duration, a run of no users, impossible error counts, and reads quoted headers", () => {
    expect(() => readLoadTest("n.csv", "users,rps,latency,p50\n1,20,50,-5ms\n")).toThrow('p50 "-5ms" is not a duration of 0 or more');
    expect(() => readLoadTest("z.csv", "users,rps,latency\n0,20,50\n")).toThrow("line 2, concurrency 0: a run has users");
    const vegeta = JSON.parse(loadTestFixture("vegeta-report.json"));
    expect(() => readLoadTest("v.json", JSON.stringify({ ...vegeta, success: 3 }))).toThrow("success is 3, not a share from 0 to 1");
    expect(() =>
      readLoadTest("p.txt", "concurrency    4:     75.9 req/s, p50 52.7 ms, p90 54.4 ms, p99 57.6 ms, errors 50 (200.0 %)\n"),
    ).toThrow("run 1 has 50 errors of 25 answers");
    expect(readLoadTest("q.csv", '"users","rps","latency"\n1,20,50\n').steps[0]).toMatchObject({ concurrency: 1, throughputPerSec: 20 });
  });
});

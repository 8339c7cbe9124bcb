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

import { describe, expect, it } from "vitest";
import { csv } from "../../../../src/probe/from/csv.ts";
import { LoadTestFileError } from "../../../../src/probe/from/load-test.ts";
import { loadTestFixture } from "./fixture.ts";

describe("a CSV of load-test results", () => {
  it("reads a row per run, by the columns' usual names", () => {
    const text = loadTestFixture("steps.csv");
    expect(csv.recognizes(text)).toBe(true);
    const { steps, assumed } = csv.read(text);
    expect(steps.map((step) => [step.concurrency, step.throughputPerSec, step.meanLatencyMs, step.p99Ms])).toEqual([
      [1, 47.3, 21.14, 34.61],
      [2, 96.3, 20.62, 26.65],
      [4, 194.7, 20.5, 22.31],
      [8, 192, 41.35, 44.37],
      [16, 190.7, 82.89, 108.39],
    ]);
    expect(assumed).toEqual([]);
  });

  it("takes durations with their units, and names what a file without concurrency, percentiles or errors lacks", () => {
    const { steps, assumed } = csv.read("Throughput,Mean Latency\n100,40ms\n150,0.1s\n");
    expect(steps.map((step) => [step.concurrency, step.meanLatencyMs])).toEqual([
      [4, 40],
      [15, 100],
    ]);
    expect(assumed).toEqual([
      expect.stringContaining("Little's law"),
      "p50, p90, p99: not in the file, shown as n/a; the fit takes the service times as constant (no spread to read)",
      "errors: no errors column, counted as none",
    ]);
  });

  it("refuses a cell that is not a figure, naming its line and column, and a ragged row", () => {
    expect(() => csv.read("concurrency,rps,latency\n1,fast,20\n")).toThrow(
      new LoadTestFileError(
        'CSV (a header row: concurrency, throughput, latency …): line 2, throughput "fast" is not a number of 0 or more',
      ),
    );
    expect(() => csv.read("concurrency,rps,latency\n1,2\n")).toThrow(LoadTestFileError);
    expect(() => csv.read("concurrency,rps,latency\n1,20,soon\n")).toThrow('latency "soon"');
  });
});

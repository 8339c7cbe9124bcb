import { describe, expect, it } from "vitest";
import { k6 } from "../../../../src/probe/from/k6.ts";
import { formatStep } from "../../../../src/probe/probe-run.ts";
import { loadTestFixture } from "./fixture.ts";

describe("k6's end-of-test summary", () => {
  const text = loadTestFixture("k6-summary-export.json");

  it("reads --summary-export: Little's law's concurrency (its users may think), failed requests, and names the p99 it lacks", () => {
    expect(k6.recognizes(text)).toBe(true);
    const { steps, assumed } = k6.read(text);
    expect(steps[0]).toMatchObject({
      concurrency: 7.96,
      throughputPerSec: 189.93,
      meanLatencyMs: 41.9,
      p50Ms: 41.2,
      p90Ms: 44.7,
      requests: 5700,
      errors: 12,
    });
    expect(Number.isNaN(steps[0]!.p99Ms)).toBe(true);
    expect(formatStep(steps[0]!)).toBe("concurrency 7.96:    189.9 req/s, p50 41.2 ms, p90 44.7 ms, p99 n/a, errors 12 (0.2 %)");
    expect(assumed).toEqual([
      expect.stringContaining("Little's law"),
      'p99: not in the file, shown as n/a (k6 --summary-trend-stats "avg,med,p(90),p(99)")',
    ]);
  });

  it("reads handleSummary's JSON, whose figures sit under values", () => {
    const nested = JSON.parse(text);
    for (const metric of Object.values(nested.metrics) as Record<string, unknown>[]) {
      const values = { ...metric };
      for (const key of Object.keys(metric)) delete metric[key];
      metric.values = values;
    }
    expect(k6.read(JSON.stringify(nested)).steps).toEqual(k6.read(text).steps);
  });
});

import { describe, expect, it } from "vitest";
import { autocannon } from "../../../../src/probe/from/autocannon.ts";
import { LoadTestFileError } from "../../../../src/probe/from/load-test.ts";
import { loadTestFixture } from "./fixture.ts";

describe("autocannon --json", () => {
  const text = loadTestFixture("autocannon-8.json");

  it("reads a real run: connections × pipelining in the service, every answer over the duration, its percentiles", () => {
    expect(autocannon.recognizes(text)).toBe(true);
    const { steps, assumed } = autocannon.read(text);
    const json = JSON.parse(text);
    expect(steps).toEqual([
      {
        concurrency: 8,
        throughputPerSec: json.latency.totalCount / json.duration,
        meanLatencyMs: json.latency.mean,
        p50Ms: json.latency.p50,
        p90Ms: json.latency.p90,
        p99Ms: json.latency.p99,
        requests: json.latency.totalCount,
        errors: 0,
      },
    ]);
    expect(assumed).toEqual([]);
    // Little's law holds for its closed loop: throughput × mean latency is about the connections.
    expect((steps[0]!.throughputPerSec * steps[0]!.meanLatencyMs) / 1000).toBeCloseTo(8, 0);
  });

  it("counts failed connections and answers outside 2xx as errors, and names a missing figure", () => {
    const json = { ...JSON.parse(text), errors: 5, timeouts: 2, non2xx: 7, pipelining: 2 };
    expect(autocannon.read(JSON.stringify(json)).steps[0]).toMatchObject({
      concurrency: 16,
      errors: 12,
      requests: json.latency.totalCount + 5,
    });
    const broken = { ...json, latency: { ...json.latency, mean: "fast" } };
    expect(() => autocannon.read(JSON.stringify(broken))).toThrow(
      new LoadTestFileError('autocannon --json: latency.mean is "fast", not a number of 0 or more'),
    );
  });
});

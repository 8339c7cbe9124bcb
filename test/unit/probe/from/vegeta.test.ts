import { describe, expect, it } from "vitest";
import { vegeta } from "../../../../src/probe/from/vegeta.ts";
import { loadTestFixture } from "./fixture.ts";

describe("vegeta report -type=json", () => {
  it("reads an attack at a fixed rate: nanoseconds to ms, every answer over duration and wait, Little's law's concurrency", () => {
    const text = loadTestFixture("vegeta-report.json");
    expect(vegeta.recognizes(text)).toBe(true);
    const { steps, assumed } = vegeta.read(text);
    const throughput = 3000 / 15.036;
    expect(steps[0]).toMatchObject({ meanLatencyMs: 41.152263, p50Ms: 40.1, p90Ms: 44.8, p99Ms: 96.3, requests: 3000, errors: 90 });
    expect(steps[0]!.throughputPerSec).toBeCloseTo(throughput, 9);
    expect(steps[0]!.concurrency).toBe(Number(((throughput * 41.152263) / 1000).toPrecision(3)));
    expect(assumed).toEqual([expect.stringContaining("Little's law")]);
  });
});

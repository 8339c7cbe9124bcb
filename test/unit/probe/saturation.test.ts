import { describe, expect, it } from "vitest";
import type { StepMeasure } from "../../../src/probe/fit/step-measure.ts";
import { everydayErrorRate, saturation } from "../../../src/probe/saturation.ts";

const step = (concurrency: number, throughputPerSec: number, extra: Partial<StepMeasure> = {}): StepMeasure => ({
  concurrency,
  throughputPerSec,
  meanLatencyMs: (concurrency * 1000) / throughputPerSec,
  p50Ms: 10,
  p90Ms: 12,
  p99Ms: 15,
  requests: 1000,
  errors: 0,
  ...extra,
});
const RULE = { minGrowth: 0.1, maxP99Ms: 1000, maxErrors: 0.05 };

describe("saturation", () => {
  it("goes on while throughput grows by more than -min-growth over the best step before", () => {
    expect(saturation([step(1, 50)], RULE)).toBeUndefined();
    expect(saturation([step(1, 50), step(2, 100), step(4, 111)], RULE)).toBeUndefined();
  });

  it("stops once it grows by no more, or falls", () => {
    expect(saturation([step(1, 50), step(2, 100), step(4, 109)], RULE)).toEqual({
      kind: "throughput",
      growth: expect.closeTo(0.09, 9) as number,
    });
    expect(saturation([step(1, 50), step(2, 100), step(4, 80)], RULE)?.kind).toBe("throughput");
  });

  it("stops when p99 or errors pass their bounds, even on the first step", () => {
    expect(saturation([step(1, 50, { p99Ms: 1001 })], RULE)).toEqual({ kind: "p99", p99Ms: 1001 });
    expect(saturation([step(1, 50, { errors: 51 })], RULE)).toEqual({ kind: "errors", share: 0.051 });
    expect(saturation([step(1, 50, { errors: 50 })], RULE)).toBeUndefined();
  });
});

describe("everydayErrorRate", () => {
  it("counts the errors of the steps up to the one of highest throughput, not overload's after it", () => {
    const steps = [step(1, 50, { errors: 1 }), step(2, 100, { errors: 3 }), step(4, 90, { errors: 400 })];
    expect(everydayErrorRate(steps)).toBeCloseTo(4 / 2000, 12);
    expect(everydayErrorRate([])).toBe(0);
  });
});

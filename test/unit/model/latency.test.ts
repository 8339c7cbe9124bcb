import { describe, expect, it } from "vitest";
import { concurrencyForDelay, DEFAULT_LATENCY_MODEL, modelledDelayMs } from "../../../src/model/latency.ts";

describe("modelledDelayMs", () => {
  it.each([
    [0, 100],
    [30, 100],
    [45, 105],
    [60, 110.25],
  ])("with the reference defaults, delay(%i) = %f ms", (concurrency, expected) => {
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, concurrency)).toBeCloseTo(expected, 9);
  });

  it("matches the article's figure: 1040 in service gives about 2.67 s", () => {
    // 100ms * 1.05^((1040-30)/15) = 2.671444385 s, the value the article prints.
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, 1040)).toBeCloseTo(2671.444385, 3);
  });

  it("grows to Infinity instead of wrapping to a negative value", () => {
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, 7_800)).toBeGreaterThan(9.2e12); // beyond Go's int64 ns
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, 10_000_000)).toBe(Infinity);
    expect(modelledDelayMs({ ...DEFAULT_LATENCY_MODEL, baseDelayMs: 0 }, 10_000_000)).toBe(0);
  });
});

describe("concurrencyForDelay", () => {
  it("finds the smallest concurrency whose delay reaches the client timeout", () => {
    const tippingPoint = concurrencyForDelay(DEFAULT_LATENCY_MODEL, 2000);
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, tippingPoint)).toBeGreaterThanOrEqual(2000);
    expect(modelledDelayMs(DEFAULT_LATENCY_MODEL, tippingPoint - 1)).toBeLessThan(2000);
    expect(tippingPoint).toBe(952);
  });

  it("is 0 for delays the base already reaches and Infinity when the delay never grows", () => {
    expect(concurrencyForDelay(DEFAULT_LATENCY_MODEL, 50)).toBe(0);
    expect(concurrencyForDelay({ ...DEFAULT_LATENCY_MODEL, factor: 1 }, 500)).toBe(Infinity);
  });
});

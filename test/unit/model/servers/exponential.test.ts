import { describe, expect, it } from "vitest";
import { concurrencyForDelay, DEFAULT_LATENCY_MODEL, modelledDelayMs } from "../../../../src/model/latency.ts";
import { exponentialFigures } from "../../../../src/model/servers/exponential.ts";

const perSec = (concurrency: number) => concurrency / (modelledDelayMs(DEFAULT_LATENCY_MODEL, concurrency) / 1000);

describe("the exponential model's figures", () => {
  it("puts its capacity where c ÷ delay(c) peaks, at K ÷ ln(factor) above the limit, within the timeout", () => {
    const figures = exponentialFigures(DEFAULT_LATENCY_MODEL, 2000);
    // 15 / ln(1.05) = 307.4: the throughput rises up to 307 and falls after it.
    expect(figures.capacityAtConcurrency).toBe(307);
    expect(figures.capacityPerSec).toBeCloseTo(perSec(307), 9);
    for (const other of [30, 100, 306, 308, 500, 951]) expect(perSec(other)).toBeLessThan(figures.capacityPerSec);
    expect(figures.tippingConcurrency).toBe(concurrencyForDelay(DEFAULT_LATENCY_MODEL, 2000));
    expect(figures.tippingConcurrency).toBe(952);
    expect(figures.overloadAbove).toBe(30); // the verdict reads the limit, as it always has
  });

  it("stops at the last concurrency whose delay is below a short timeout", () => {
    const figures = exponentialFigures(DEFAULT_LATENCY_MODEL, 200);
    const tipping = concurrencyForDelay(DEFAULT_LATENCY_MODEL, 200);
    expect(tipping).toBeLessThan(307);
    expect(figures.capacityAtConcurrency).toBe(tipping - 1);
    expect(figures.capacityPerSec).toBeCloseTo(perSec(tipping - 1), 9);
  });

  it("serves limit ÷ baseDelay with shedding at the limit, with no tipping point", () => {
    const figures = exponentialFigures(DEFAULT_LATENCY_MODEL, 2000, 30);
    expect(figures.capacityPerSec).toBeCloseTo(300, 9);
    expect(figures.tippingConcurrency).toBeUndefined();
  });

  it("serves nothing in time when the base delay is the timeout, and without bound when the delay never grows", () => {
    expect(exponentialFigures(DEFAULT_LATENCY_MODEL, 100).capacityPerSec).toBe(0);
    expect(exponentialFigures({ ...DEFAULT_LATENCY_MODEL, factor: 1 }, 2000).capacityPerSec).toBe(Infinity);
  });
});

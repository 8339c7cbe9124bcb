import { describe, expect, it } from "vitest";
import { NORMAL_CONDITIONS } from "../../../../../src/model/faults/kind.ts";
import { DEFAULT_LATENCY_MODEL } from "../../../../../src/model/latency.ts";
import { exponential, exponentialCurve, exponentialFigures } from "../../../../../src/model/servers/kinds/exponential.ts";
import { serverModelFromArgs, settingsArgs } from "../../../../helpers/server-model-flags.ts";

const { delayMs: modelledDelayMs, concurrencyForDelay } = exponentialCurve;

describe("the exponential curve's delay", () => {
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

describe("the exponential curve's concurrency for a delay", () => {
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

describe("the exponential model's definition", () => {
  const spec = { kind: "exponential", latency: { baseDelayMs: 250, limit: 12, factor: 1.2, exponentDivisor: 15 } } as const;

  it("is read back from its own flag settings, and is the default with no flag", () => {
    expect(exponential.settings(spec)).toEqual({ model: "exponential", limit: 12, factor: 1.2, k: 15, baseDelay: "250ms" });
    expect(serverModelFromArgs(settingsArgs(exponential.settings(spec)))).toEqual(spec);
    expect(serverModelFromArgs([])).toEqual({ kind: "exponential", latency: DEFAULT_LATENCY_MODEL });
  });

  it("describes its parameters as its flags name them, and its figures", () => {
    expect(exponential.describe(spec)).toBe("exponential (limit 12, factor 1.2, k 15, baseDelay 250ms)");
    expect(exponential.figures(spec, 2000, Infinity)).toEqual(exponentialFigures(spec.latency, 2000));
    expect(exponential.timeoutNote!(spec, 2000)).toBe(
      `the delay reaches the 2s timeout at ${concurrencyForDelay(spec.latency, 2000)} requests in service (limit 12, factor 1.2, k 15, baseDelay 250ms)`,
    );
  });

  it("cuts its limit under a capacity fault and slows its base delay under a slow one", () => {
    const conditions = { capacityFactor: 0.5, slowFactor: 2, errorRate: undefined };
    expect(exponentialCurve.under(DEFAULT_LATENCY_MODEL, conditions)).toEqual({ ...DEFAULT_LATENCY_MODEL, limit: 15, baseDelayMs: 200 });
    expect(exponentialCurve.under(DEFAULT_LATENCY_MODEL, NORMAL_CONDITIONS)).toBe(DEFAULT_LATENCY_MODEL);
    expect(exponential.sharedDelay!(spec).under(conditions).delayMs(6)).toBe(500);
  });

  it("rounds a fitted spec to the digits its flags state, and sheds above its limit", () => {
    const fitted = { kind: "exponential", latency: { baseDelayMs: 101.234, limit: 30, factor: 1.051234, exponentDivisor: 15 } } as const;
    expect(exponential.rounded(fitted).latency).toEqual({ baseDelayMs: 101, limit: 30, factor: 1.051, exponentDivisor: 15 });
    expect(exponential.closedLoopLatencyMs(spec, 12, 5)).toBe(255);
    expect(exponential.shedding(spec, 100_000).at).toBeGreaterThan(12);
    expect(exponential.drawsRandom(spec)).toBe(false);
    expect(exponential.middleTier).toBeUndefined();
  });
});

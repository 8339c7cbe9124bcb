import { describe, expect, it } from "vitest";
import { NORMAL_CONDITIONS } from "../../../../../src/model/faults/kind.ts";
import { usl, uslCurve, uslFigures, type UslLatency, uslPeak } from "../../../../../src/model/servers/kinds/usl.ts";
import { serverModelFromArgs, settingsArgs } from "../../../../helpers/server-model-flags.ts";

const { delayMs, concurrencyForDelay } = uslCurve;

/** 50 ms alone, 5 % contention, 0.2 % coherency: its throughput peaks at √(0.95 ÷ 0.002) = 21.8 in service. */
const SERVICE: UslLatency = { kind: "usl", baseDelayMs: 50, sigma: 0.05, kappa: 0.002 };

describe("the usl model", () => {
  it("delays every request by baseDelay × (1 + σ(c − 1) + κc(c − 1)), so its throughput c ÷ delay(c) is the USL's", () => {
    expect(delayMs(SERVICE, 0)).toBe(50);
    expect(delayMs(SERVICE, 1)).toBe(50);
    expect(delayMs(SERVICE, 11)).toBeCloseTo(50 * (1 + 0.05 * 10 + 0.002 * 110), 12);
    const throughput = (c: number) => c / (delayMs(SERVICE, c) / 1000);
    expect(throughput(22)).toBeGreaterThan(throughput(15));
    expect(throughput(22)).toBeGreaterThan(throughput(40));
    expect(uslPeak(SERVICE)).toBeCloseTo(Math.sqrt(0.95 / 0.002), 12);
  });

  it("finds the concurrency whose delay reaches a timeout exactly, and none without contention or coherency", () => {
    for (const timeoutMs of [51, 100, 1000, 2000, 2000.001]) {
      const tipping = concurrencyForDelay(SERVICE, timeoutMs);
      expect(delayMs(SERVICE, tipping)).toBeGreaterThanOrEqual(timeoutMs);
      expect(delayMs(SERVICE, tipping - 1)).toBeLessThan(timeoutMs);
    }
    expect(concurrencyForDelay(SERVICE, 40)).toBe(0);
    expect(concurrencyForDelay({ ...SERVICE, sigma: 0, kappa: 0 }, 2000)).toBe(Infinity);
    expect(concurrencyForDelay({ ...SERVICE, kappa: 0 }, 2000)).toBe(Math.ceil(1 + 39 / 0.05));
  });

  it("states its capacity at its peak, and its tipping point", () => {
    const figures = uslFigures(SERVICE, 2000);
    expect([21, 22]).toContain(figures.capacityAtConcurrency);
    expect(figures.capacityPerSec).toBeCloseTo(figures.capacityAtConcurrency / (delayMs(SERVICE, figures.capacityAtConcurrency) / 1000), 9);
    expect(figures.tippingConcurrency).toBe(concurrencyForDelay(SERVICE, 2000));
    expect(figures.overloadAbove).toBe(figures.tippingConcurrency! - 1);
  });
});

describe("the usl model's definition", () => {
  const spec = { kind: "usl", latency: SERVICE } as const;

  it("is read back from its own flag settings; σ and κ default to the definition's", () => {
    expect(usl.settings(spec)).toEqual({ model: "usl", baseDelay: "50ms", "usl-sigma": 0.05, "usl-kappa": 0.002 });
    expect(serverModelFromArgs(settingsArgs(usl.settings(spec)))).toEqual(spec);
    expect(serverModelFromArgs(["-model", "usl", "-baseDelay", "50ms"])).toEqual({ kind: "usl", latency: { ...SERVICE, kappa: 0.001 } });
    expect(() => serverModelFromArgs(["-model", "queue", "-usl-kappa", "0.01"])).toThrow("-usl-kappa does not apply to -model queue");
  });

  it("describes its parameters as its flags name them, scales its delay by slow ÷ capacity under faults", () => {
    expect(usl.describe(spec)).toBe("usl (baseDelay 50ms, sigma 0.05, kappa 0.002)");
    expect(uslCurve.under(SERVICE, { capacityFactor: 0.5, slowFactor: 2, errorRate: undefined })).toEqual({ ...SERVICE, baseDelayMs: 200 });
    expect(uslCurve.under(SERVICE, NORMAL_CONDITIONS)).toBe(SERVICE);
    expect(usl.closedLoopLatencyMs(spec, 11, 3)).toBeCloseTo(delayMs(SERVICE, 11) + 3, 12);
  });
});

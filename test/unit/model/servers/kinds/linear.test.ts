import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../../../src/clock/manual-clock.ts";
import { NORMAL_CONDITIONS } from "../../../../../src/model/faults/kind.ts";
import { linear, linearCurve, type LinearLatency, linearFigures } from "../../../../../src/model/servers/kinds/linear.ts";
import { boundDelay } from "../../../../../src/model/servers/delay-models.ts";
import { ServiceQueue } from "../../../../../src/model/service-queue.ts";
import { serverModelFromArgs, settingsArgs } from "../../../../helpers/server-model-flags.ts";

const { delayMs: modelledDelayMs, concurrencyForDelay } = linearCurve;

/** Brooker's collapse simulation: 1 s + 10 ms per request in service, clients giving up after 3 s. */
const BROOKER: LinearLatency = { kind: "linear", baseDelayMs: 1000, slopeMs: 10 };

describe("the linear model", () => {
  it("delays every request by baseDelay + slope × the requests in service", () => {
    expect(modelledDelayMs(BROOKER, 1)).toBe(1010);
    expect(modelledDelayMs(BROOKER, 200)).toBe(3000);
    expect(concurrencyForDelay(BROOKER, 3000)).toBe(200);
    expect(concurrencyForDelay(BROOKER, 3000.5)).toBe(201);
    expect(concurrencyForDelay(BROOKER, 500)).toBe(0);
    expect(concurrencyForDelay({ ...BROOKER, slopeMs: 0 }, 3000)).toBe(Infinity);
  });

  it("completes requests at the exact instants of the shared delay, re-evaluated as concurrency changes", () => {
    const clock = new ManualClock();
    const queue = new ServiceQueue(clock, { delay: boundDelay(linearCurve, BROOKER), cancelOnDisconnect: false, maxConcurrency: Infinity });
    const completions: string[] = [];
    const arrive = (name: string) => queue.admit(() => completions.push(`${name}@${clock.now()}`));
    arrive("a"); // alone: 1010 ms
    clock.advanceBy(500);
    arrive("b"); // two in service: 1020 ms for both, so a is due at 1020
    clock.advanceBy(519.999);
    expect(completions).toEqual([]);
    clock.advanceBy(0.001);
    expect(completions).toEqual(["a@1020"]);
    expect(queue.lastDelayMs).toBe(1010); // b alone again: due 1010 after its arrival
    clock.advanceBy(490);
    expect(completions).toEqual(["a@1020", "b@1510"]);
  });

  it("states Brooker's capacity (between his steady 40 and his spiked 80 req/s) and tipping point", () => {
    const figures = linearFigures(BROOKER, 3000);
    expect(figures.capacityAtConcurrency).toBe(199);
    expect(figures.capacityPerSec).toBeCloseTo(199 / 2.99, 9);
    expect(figures.tippingConcurrency).toBe(200);
    expect(figures.overloadAbove).toBe(199);
  });

  it("has no tipping point when shedding stops it short of one, nor a bound without a slope", () => {
    const shedding = linearFigures(BROOKER, 3000, 100);
    expect(shedding.tippingConcurrency).toBeUndefined();
    expect(shedding.capacityAtConcurrency).toBe(100);
    expect(shedding.capacityPerSec).toBeCloseTo(100 / 2, 9);
    const flat = linearFigures({ ...BROOKER, slopeMs: 0 }, 3000);
    expect(flat.capacityPerSec).toBe(Infinity);
    expect(flat.tippingConcurrency).toBeUndefined();
  });
});

describe("the linear model's definition", () => {
  const spec = { kind: "linear", latency: BROOKER } as const;

  it("is read back from its own flag settings; its slope defaults to Brooker's", () => {
    expect(linear.settings(spec)).toEqual({ model: "linear", baseDelay: "1s", slope: "10ms" });
    expect(serverModelFromArgs(settingsArgs(linear.settings(spec)))).toEqual(spec);
    expect(serverModelFromArgs(["-model", "linear", "-baseDelay", "1s"])).toEqual(spec);
  });

  it("describes its parameters as its flags name them, and its figures", () => {
    expect(linear.describe(spec)).toBe("linear (baseDelay 1s + slope 10ms per request in service)");
    expect(linear.figures(spec, 3000, Infinity)).toEqual(linearFigures(BROOKER, 3000));
    expect(linear.timeoutNote).toBeUndefined();
  });

  it("scales its whole delay by slow ÷ capacity under faults", () => {
    const conditions = { capacityFactor: 0.5, slowFactor: 2, errorRate: undefined };
    expect(linearCurve.under(BROOKER, conditions)).toEqual({ kind: "linear", baseDelayMs: 4000, slopeMs: 40 });
    expect(linearCurve.under(BROOKER, NORMAL_CONDITIONS)).toBe(BROOKER);
    expect(linear.sharedDelay!(spec).under(conditions).delayMs(1)).toBe(4040);
  });

  it("rounds a fitted spec to three digits, and sheds below half the timeout", () => {
    const fitted = { kind: "linear", latency: { kind: "linear", baseDelayMs: 1001.7, slopeMs: 10.0449 } } as const;
    expect(linear.rounded(fitted).latency).toEqual({ kind: "linear", baseDelayMs: 1000, slopeMs: 10 });
    expect(linear.closedLoopLatencyMs(spec, 100, 5)).toBe(2005);
    // 1 s + 10 ms × c reaches 1.5 s at 50: it sheds above 49.
    expect(linear.shedding(spec, 3000)).toMatchObject({ flag: "max-concurrency", at: 49 });
    expect(linear.drawsRandom(spec)).toBe(false);
    expect(linear.middleTier).toBeUndefined();
  });
});

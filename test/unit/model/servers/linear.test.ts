import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import { concurrencyForDelay, modelledDelayMs } from "../../../../src/model/latency.ts";
import { type LinearLatency, linearFigures } from "../../../../src/model/servers/linear.ts";
import { ServiceQueue } from "../../../../src/model/service-queue.ts";

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
    const queue = new ServiceQueue(clock, { latency: BROOKER, cancelOnDisconnect: false, maxConcurrency: Infinity });
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

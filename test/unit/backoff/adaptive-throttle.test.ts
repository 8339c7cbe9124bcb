import { describe, expect, it } from "vitest";
import { AdaptiveThrottle, adaptiveThrottleConfig, sreRejectProbability } from "../../../src/backoff/adaptive-throttle.ts";

describe("SRE client-side adaptive throttling", () => {
  it("gives p = 20/101 for 100 requests and 40 accepts with K = 2", () => {
    expect(sreRejectProbability(100, 40, 2)).toBe(20 / 101);
  });

  it("rejects nothing while the backend accepts at least half, and almost everything when it accepts nothing", () => {
    expect(sreRejectProbability(100, 50, 2)).toBe(0);
    expect(sreRejectProbability(100, 100, 2)).toBe(0);
    expect(sreRejectProbability(0, 0, 2)).toBe(0);
    expect(sreRejectProbability(1000, 0, 2)).toBe(1000 / 1001);
    expect(sreRejectProbability(100, 40, 1.5)).toBe(40 / 101);
  });

  it("defaults to K = 2 over two minutes", () => {
    expect(adaptiveThrottleConfig()).toEqual({ k: 2, windowMs: 120_000, buckets: 12 });
    expect(() => adaptiveThrottleConfig({ k: 0 })).toThrow("k must be > 0 (got 0)");
  });

  it("counts every request, rejected or not, and accepts; rejects when the draw falls under p", () => {
    const throttle = new AdaptiveThrottle();
    for (let request = 0; request < 100; request++) {
      throttle.reject(0, 0.999, 0); // a draw above any p below 1: sent
      if (request < 40) throttle.accepted(0);
    }
    expect(throttle.counts(0)).toEqual({ requests: 100, accepts: 40 });
    expect(throttle.rejectProbability(0)).toBe(20 / 101);
    expect(throttle.reject(0, 20 / 101 - 1e-9)).toBe(true);
    expect(throttle.reject(0, 0.5)).toBe(false);
    expect(throttle.counts(0).requests).toBe(102);
  });

  it("forgets after the window, on bucket edges, and keeps instances apart", () => {
    const throttle = new AdaptiveThrottle(adaptiveThrottleConfig(), 2);
    for (let request = 0; request < 10; request++) throttle.reject(10_000, 0.999, 1);
    expect(throttle.rejectProbability(129_999, 1)).toBe(10 / 11);
    expect(throttle.rejectProbability(130_000, 1)).toBe(0);
    expect(throttle.rejectProbability(10_000, 0)).toBe(0);
  });
});

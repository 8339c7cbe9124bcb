import { describe, expect, it } from "vitest";
import { nextWindowEnd, perSecond, WindowStats } from "../../../src/model/window-stats.ts";

describe("window statistics", () => {
  it("computes rates over the window's real length", () => {
    expect(perSecond(500, { startMs: 0, endMs: 5_000 })).toBe(100);
    expect(perSecond(500, { startMs: 0, endMs: 25_000 })).toBe(20);
    expect(perSecond(5, { startMs: 10, endMs: 10 })).toBe(0);
  });

  it("closes windows on a fixed grid, skipping to the next point ahead after a late wake-up", () => {
    expect(nextWindowEnd(1_000, 5_000, 1_000)).toBe(6_000);
    expect(nextWindowEnd(1_000, 5_000, 6_003)).toBe(11_000);
    expect(nextWindowEnd(1_000, 5_000, 27_500)).toBe(31_000);
  });

  it("reports latency percentiles of OK answers only, and counts error kinds", () => {
    const stats = new WindowStats(0);
    for (let index = 1; index <= 100; index++) {
      stats.attemptStarted(false);
      stats.attemptEnded({ outcome: "ok" }, index);
    }
    stats.attemptStarted(true);
    stats.attemptEnded({ outcome: "error", errorKind: "refused" }, 100_000);
    stats.attemptStarted(true);
    stats.attemptEnded({ outcome: "timedout" }, 2_000);
    stats.gaveUp();
    stats.attemptRefused("throttled");
    stats.attemptRefused("rejected");
    stats.attemptRefused("rejected");
    const window = stats.closeWindow(1_000);
    expect(window.counts).toEqual({
      ok: 100,
      errors: 1,
      timedout: 1,
      gaveUp: 1,
      attempts: 102,
      retries: 2,
      throttled: 1,
      rejected: 2,
      errorKinds: { refused: 1 },
    });
    expect(window.latency?.p50Ms).toBeCloseTo(50, 1);
    expect(window.latency?.p99Ms).toBeCloseTo(99, 1);
    expect(window.latency?.maxMs).toBeCloseTo(100, 1);
    expect(stats.closeWindow(2_000).latency).toBeUndefined();
  });
});

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
      notSent: 0,
      errorKinds: { refused: 1 },
    });
    expect(window.latency?.p50Ms).toBeCloseTo(50, 1);
    expect(window.latency?.p99Ms).toBeCloseTo(99, 1);
    expect(window.latency?.maxMs).toBeCloseTo(100, 1);
    expect(stats.closeWindow(2_000).latency).toBeUndefined();
  });

  it("reports the exact maximum and never a percentile above it (histogram buckets round up)", () => {
    const stats = new WindowStats(0);
    // Every answer after exactly the base delay: the histogram's bucket for 100 ms ends at
    // 100.031 ms, which is what it gives for every percentile.
    for (let index = 0; index < 1000; index++) stats.attemptEnded({ outcome: "ok" }, 100);
    const window = stats.closeWindow(5_000);
    expect(window.latency).toEqual({ p50Ms: 100, p99Ms: 100, maxMs: 100 });
    // Over windows the total keeps the exact maximum, not a bucket's end.
    stats.attemptEnded({ outcome: "ok" }, 2_345.678901);
    stats.attemptEnded({ outcome: "ok" }, 100);
    const totals = stats.totals(10_000);
    expect(totals.latency?.maxMs).toBe(2_345.678901);
    expect(totals.latency?.p99Ms).toBeCloseTo(100, 1); // the bucket of 100 ms: below the maximum, left as it is
    const next = stats.closeWindow(10_000);
    expect(next.latency?.maxMs).toBe(2_345.678901);
    expect(next.latency!.p99Ms).toBeLessThanOrEqual(next.latency!.maxMs);
    expect(next.latency!.p99Ms).toBeGreaterThan(2_343); // 3 significant digits
  });

  it("keeps p50 <= p99 <= max for any latencies, including ones the histogram clamps", () => {
    const stats = new WindowStats(0);
    const latencies = [0, 0.0004, 99.9999999, 100.0000001, 7_200_000]; // 0 and 0.4 µs below its 1 µs floor, 2 h above its 1 h ceiling
    for (const latencyMs of latencies) stats.attemptEnded({ outcome: "ok" }, latencyMs);
    const { latency } = stats.closeWindow(1_000);
    expect(latency?.maxMs).toBe(7_200_000);
    expect(latency!.p50Ms).toBeLessThanOrEqual(latency!.p99Ms);
    expect(latency!.p99Ms).toBeLessThanOrEqual(latency!.maxMs);
    const small = new WindowStats(0);
    small.attemptEnded({ outcome: "ok" }, 0);
    expect(small.closeWindow(1_000).latency).toEqual({ p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });
});

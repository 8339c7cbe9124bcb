import { describe, expect, it } from "vitest";
import { RollingCounts } from "../../../src/backoff/rolling-window.ts";

describe("RollingCounts (a sliding window in buckets)", () => {
  it("keeps a value added on a bucket edge for exactly the window, and no longer", () => {
    const counts = new RollingCounts({ windowMs: 10_000, buckets: 10 });
    counts.add(0, 0, 3_000, 5);
    expect(counts.sum(0, 0, 3_000)).toBe(5);
    expect(counts.sum(0, 0, 12_999.9)).toBe(5);
    expect(counts.sum(0, 0, 13_000)).toBe(0);
  });

  it("lets a value added inside a bucket expire with that bucket, up to one bucket early", () => {
    const counts = new RollingCounts({ windowMs: 10_000, buckets: 10 });
    counts.add(0, 0, 3_700, 1);
    expect(counts.sum(0, 0, 12_999)).toBe(1);
    expect(counts.sum(0, 0, 13_000)).toBe(0);
  });

  it("sums several buckets, drops them one by one, and keeps series and fields apart", () => {
    const counts = new RollingCounts({ windowMs: 3_000, buckets: 3, fields: 2, series: 2 });
    counts.add(0, 0, 0, 1);
    counts.add(0, 0, 1_000, 2);
    counts.add(0, 1, 1_500, 10);
    counts.add(1, 0, 2_000, 100);
    counts.add(0, 0, 2_000, -4);
    expect([counts.sum(0, 0, 2_000), counts.sum(0, 1, 2_000), counts.sum(1, 0, 2_000), counts.sum(1, 1, 2_000)]).toEqual([-1, 10, 100, 0]);
    expect(counts.sum(0, 0, 3_000)).toBe(-2); // the bucket of t=0 left
    expect(counts.sum(0, 0, 4_000)).toBe(-4);
    expect(counts.sum(0, 1, 4_000)).toBe(0);
    expect(counts.sum(0, 0, 60_000)).toBe(0); // long idle: all gone at once
    expect(counts.sum(1, 0, 4_999)).toBe(100);
    expect(counts.sum(1, 0, 5_000)).toBe(0);
  });

  it("counts a clock that steps back into the newest bucket, and clears one series", () => {
    const counts = new RollingCounts({ windowMs: 1_000, buckets: 2, series: 2 });
    counts.add(0, 0, 5_000, 1);
    counts.add(0, 0, 4_000, 1);
    expect(counts.sum(0, 0, 5_000)).toBe(2);
    counts.add(1, 0, 5_000, 7);
    counts.clear(0);
    expect([counts.sum(0, 0, 5_000), counts.sum(1, 0, 5_000)]).toEqual([0, 7]);
  });

  it("rejects a window or bucket count that cannot work", () => {
    expect(() => new RollingCounts({ windowMs: 0, buckets: 1 })).toThrow("windowMs must be > 0 (got 0)");
    expect(() => new RollingCounts({ windowMs: 10, buckets: 1.5 })).toThrow("buckets must be an integer (got 1.5)");
  });
});

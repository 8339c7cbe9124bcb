import { describe, expect, it } from "vitest";
import type { Exchange, Fate } from "../../../../src/runtime/one-request.ts";
import type { OverloadRecord } from "../../../../src/probe/overload/phase.ts";
import { mostAtOnce, summarizeOverload } from "../../../../src/probe/overload/summary.ts";

/** An exchange sent at `sentAt`, connected 1 ms later unless it never connected, ended at `endedAt`. */
const exchange = (sentAt: number, endedAt: number, fate: Fate, connected = true): Exchange => ({
  sentAt,
  connectedAt: connected ? sentAt + 1 : undefined,
  endedAt,
  fate,
});

const record = (exchanges: Exchange[], maxLagMs = 0): OverloadRecord => ({
  plan: { ratePerSec: 100, requests: exchanges.length, timeoutMs: 1000, maxBodyBytes: 1000 },
  startedAt: 0,
  lastSentAt: Math.max(...exchanges.map((one) => one.sentAt)),
  exchanges,
  maxLagMs,
});

describe("what the overload phase held and turned away", () => {
  it("counts the most connections open at once, an end at a start's instant not overlapping it", () => {
    expect(mostAtOnce([exchange(0, 11, "served"), exchange(10, 20, "served"), exchange(15, 30, "timeout")])).toBe(2);
    // Connected at 1 and 11, ended at 11 and 21: back to back, never two at once.
    expect(mostAtOnce([exchange(0, 11, "served"), exchange(10, 21, "served")])).toBe(1);
    expect(mostAtOnce([exchange(0, 50, "connect-timeout", false), exchange(1, 50, "connect-timeout", false)])).toBe(0);
  });

  it("names the fate of most of the excess, and what the service held when the excess began", () => {
    // Three held for a long time; from 30 on, every request is shed at once.
    const held = [exchange(0, 500, "timeout"), exchange(10, 500, "timeout"), exchange(20, 500, "served")];
    const shed = Array.from({ length: 12 }, (_, index) => exchange(30 + 10 * index, 32 + 10 * index, "shed"));
    const summary = summarizeOverload(record([...held, ...shed, exchange(200, 1200, "connect-timeout", false)]));
    expect(summary.excess).toBe("shed");
    expect(summary.heldAtExcess).toBe(3);
    expect(summary.heldAtMost).toBe(3);
    expect(summary.counts).toEqual({
      served: 1,
      shed: 12,
      error: 0,
      timeout: 2,
      "connect-timeout": 1,
      refused: 0,
      reset: 0,
      "probe-limit": 0,
    });
    expect(summary.servedP50Ms).toBe(480);
  });

  it("takes the median of what it held at the first nine sends turned away, not the first nor the most", () => {
    // Three held throughout; four more come and go while every request is shed from 30 to 110.
    const held = [exchange(0, 500, "timeout"), exchange(10, 500, "timeout"), exchange(20, 500, "timeout")];
    const passing = [exchange(35, 95, "served"), exchange(45, 95, "served"), exchange(55, 115, "served"), exchange(65, 115, "served")];
    const shed = Array.from({ length: 9 }, (_, index) => exchange(30 + 10 * index, 32 + 10 * index, "shed"));
    // Held at the sends 30 … 110: 3, 4, 5, 6, 7, 7, 7, 5, 5.
    const summary = summarizeOverload(record([...held, ...passing, ...shed]));
    expect(summary.heldAtExcess).toBe(5);
    expect(summary.heldAtMost).toBe(7);
  });

  it("leaves the excess undefined where nothing was turned away, and the served p50 NaN where none was served", () => {
    const summary = summarizeOverload(record([exchange(0, 1000, "timeout"), exchange(10, 1010, "timeout")]));
    expect(summary.excess).toBeUndefined();
    expect(summary.heldAtExcess).toBeUndefined();
    expect(summary.heldAtMost).toBe(2);
    expect(summary.servedP50Ms).toBeNaN();
  });

  it("does not count the probe's own failures (no port, no descriptor) as the service turning work away", () => {
    const summary = summarizeOverload(record([exchange(0, 5, "probe-limit", false), exchange(1, 100, "served")]));
    expect(summary.excess).toBeUndefined();
    expect(summary.counts["probe-limit"]).toBe(1);
  });
});

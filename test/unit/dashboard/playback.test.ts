import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { parseSpeed, playBack } from "../../../src/dashboard/playback.ts";

describe("playBack", () => {
  it("delivers each event at its time divided by the speed, in order, none early", async () => {
    const clock = new ManualClock(1_000);
    const delivered: { name: string; atMs: number }[] = [];
    const events = [
      { atMs: 10_000, event: "c" },
      { atMs: 0, event: "a" },
      { atMs: 5_000, event: "b" },
      { atMs: 10_000, event: "d" },
    ];
    const done = playBack(clock, events, 10, (name) => delivered.push({ name, atMs: clock.now() }));
    expect(delivered).toEqual([{ name: "a", atMs: 1_000 }]);
    clock.runUntil(1_499);
    expect(delivered).toHaveLength(1);
    clock.runUntil(2_000);
    await done;
    // Events at the same time keep their order.
    expect(delivered).toEqual([
      { name: "a", atMs: 1_000 },
      { name: "b", atMs: 1_500 },
      { name: "c", atMs: 2_000 },
      { name: "d", atMs: 2_000 },
    ]);
  });

  it("stops when aborted", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const delivered: string[] = [];
    const done = playBack(
      clock,
      [
        { atMs: 0, event: "a" },
        { atMs: 1_000, event: "b" },
      ],
      1,
      (name) => delivered.push(name),
      controller.signal,
    );
    controller.abort();
    await done;
    clock.runUntil(5_000);
    expect(delivered).toEqual(["a"]);
  });
});

describe("parseSpeed", () => {
  it.each([
    ["10x", 10],
    ["10", 10],
    ["0.5x", 0.5],
    [".25x", 0.25],
    [" 2x ", 2],
  ])("reads %j as %d", (text, speed) => {
    expect(parseSpeed(text)).toBe(speed);
  });

  it.each(["0x", "0", "-2x", "x", "fast", "1e3x", ""])("rejects %j", (text) => {
    expect(parseSpeed(text)).toBeUndefined();
  });
});

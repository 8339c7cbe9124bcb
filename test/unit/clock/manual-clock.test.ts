import { describe, expect, it } from "vitest";
import type { TimerOwner } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { warmProbe } from "../../helpers/warm-probe.ts";

/** An object that is its own timer and logs when it fires. */
function owner(name: string, clock: ManualClock, fired: string[], onFire?: () => void): TimerOwner {
  return {
    clockSlot: undefined,
    onTimer() {
      fired.push(`${name}@${clock.now()}`);
      onFire?.();
    },
  };
}

describe("ManualClock", () => {
  it("fires timers in time order, same-time timers in scheduling order", () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.schedule(30, () => fired.push(`c@${clock.now()}`));
    clock.schedule(10, () => fired.push(`a@${clock.now()}`));
    clock.schedule(10, () => fired.push(`b@${clock.now()}`));
    clock.advanceBy(25);
    expect(fired).toEqual(["a@10", "b@10"]);
    expect(clock.now()).toBe(25);
    clock.advanceBy(5);
    expect(fired).toEqual(["a@10", "b@10", "c@30"]);
  });

  it("skips cancelled timers and runs timers scheduled by callbacks within the same advance", () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    const cancelled = clock.schedule(5, () => fired.push(-1));
    clock.schedule(1, () => clock.schedule(2, () => fired.push(clock.now())));
    clock.cancel(cancelled);
    clock.advanceBy(10);
    expect(fired).toEqual([3]);
    expect(clock.firedCount).toBe(2);
  });

  it("never fires an Infinity timer and treats negative and NaN delays as 0", () => {
    const clock = new ManualClock(100);
    const fired: string[] = [];
    clock.schedule(Infinity, () => fired.push("never"));
    clock.schedule(-5, () => fired.push(`negative@${clock.now()}`));
    clock.schedule(Number.NaN, () => fired.push(`nan@${clock.now()}`));
    expect(clock.runAll(1e300)).toBe(100);
    expect(fired).toEqual(["negative@100", "nan@100"]);
    expect(clock.nextDueAt()).toBeUndefined();
  });

  it("keeps order over many random timers (heap property)", () => {
    const clock = new ManualClock();
    const due: number[] = [];
    let state = 12345;
    for (let index = 0; index < 5000; index++) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      clock.schedule(state % 1000, () => due.push(clock.now()));
    }
    clock.runAll();
    expect(due).toHaveLength(5000);
    for (let index = 1; index < due.length; index++) expect(due[index]!).toBeGreaterThanOrEqual(due[index - 1]!);
  });

  it("re-arms an owner: the new arming replaces the pending one, also when it fires", () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    let rounds = 0;
    const ticker: TimerOwner = owner("tick", clock, fired, () => {
      if (++rounds < 3) clock.arm(ticker, 10);
    });
    clock.arm(ticker, 50);
    clock.arm(ticker, 5); // replaces the arming at 50
    clock.runAll();
    expect(fired).toEqual(["tick@5", "tick@15", "tick@25"]);
    clock.arm(ticker, 1);
    clock.cancel(ticker);
    clock.cancel(ticker);
    clock.runAll();
    expect(fired).toHaveLength(3);
    expect(clock.firedCount).toBe(3);
  });

  it("merges its FIFO lanes with the other timers by time, then by the order of arming", () => {
    const clock = new ManualClock(0, [100, 7]);
    const fired: string[] = [];
    const a = owner("a", clock, fired);
    const b = owner("b", clock, fired);
    const c = owner("c", clock, fired);
    clock.arm(a, 100); // lane, due 100
    clock.schedule(100, () => fired.push(`s@${clock.now()}`)); // queue, due 100, armed after a
    clock.advanceBy(93);
    clock.arm(b, 7); // lane, due 100, armed after both
    clock.arm(c, 3); // queue, due 96
    clock.runAll();
    expect(fired).toEqual(["c@96", "a@100", "s@100", "b@100"]);
  });

  it("moves an owner between a lane and the queue, and skips cancelled lane entries as the lane grows", () => {
    const clock = new ManualClock(0, [2_000]);
    const fired: string[] = [];
    const owners = Array.from({ length: 5_000 }, (_, index) => owner(`o${index}`, clock, fired));
    for (const [index, each] of owners.entries()) {
      clock.arm(each, 2_000); // all in the lane, which grows past its first capacity
      if (index % 3 === 0) clock.cancel(each);
      if (index % 3 === 1) clock.arm(each, 1_000 + index / 10); // moved to the queue
      clock.advanceBy(0.1);
    }
    clock.arm(owners[2]!, 1); // moved out of the lane, which holds it at 2000.2
    clock.runAll();
    const expected = owners
      .map((_, index) => ({ index, dueAt: index === 2 ? 501 : index % 3 === 1 ? index * 0.1 + 1_000 + index / 10 : index * 0.1 + 2_000 }))
      .filter(({ index }) => index % 3 !== 0)
      .sort((x, y) => x.dueAt - y.dueAt || x.index - y.index)
      .map(({ index }) => `o${index}`);
    expect(fired.map((entry) => entry.split("@")[0])).toEqual(expected);
  });

  it("halts for good after the event that calls halt(), with the time left there", () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.schedule(10, () => fired.push(`a@${clock.now()}`));
    clock.schedule(20, () => {
      fired.push(`b@${clock.now()}`);
      clock.halt();
    });
    clock.schedule(20, () => fired.push(`c@${clock.now()}`));
    clock.schedule(30, () => fired.push(`d@${clock.now()}`));
    clock.runUntil(100);
    expect(fired).toEqual(["a@10", "b@20"]);
    expect(clock.now()).toBe(20);
    expect(clock.isHalted).toBe(true);
    expect(clock.runAll()).toBe(20);
    clock.advanceBy(50);
    expect(fired).toEqual(["a@10", "b@20"]);
  });

  it("drops cancelled lane entries to make room, so a lane holds about its live timers, in order", () => {
    // A thousand clients whose deadlines (the lane's delay) are cancelled at once, over and
    // over, as when a server answers every attempt fast: the cancelled entries would stay
    // until their time, 200 000 of them; only live ones are kept.
    const clock = new ManualClock(0, [2_000]);
    const fired: string[] = [];
    const owners = Array.from({ length: 1_000 }, (_, index) => owner(`o${index}`, clock, fired));
    for (let round = 0; round < 200; round++) {
      for (const each of owners) {
        clock.arm(each, 2_000);
        clock.cancel(each);
      }
      clock.advanceBy(1);
    }
    const lane = (clock as unknown as { lanes: { size: number }[] }).lanes[0]!;
    expect(lane.size).toBeLessThanOrEqual(2_048);
    clock.arm(owners[7]!, 2_000);
    clock.arm(owners[3]!, 2_000);
    clock.runAll();
    expect(fired).toEqual(["o7@2200", "o3@2200"]);
  });

  it("has a lane's live owners warm what they keep apart before they fire, and no cancelled one", () => {
    const clock = new ManualClock(0, [2_000]);
    const warmed = new Set<number>();
    const warmedBeforeFiring: boolean[] = [];
    const owners = Array.from({ length: 100 }, (_, index) => ({
      clockSlot: undefined as unknown,
      ...warmProbe(() => warmed.add(index)),
      onTimer: () => warmedBeforeFiring.push(warmed.has(index)),
    }));
    for (const each of owners) {
      clock.arm(each, 2_000);
      clock.advanceBy(1);
    }
    for (let index = 1; index < 100; index += 2) clock.cancel(owners[index]!);
    clock.advanceBy(1_850); // 1 950 ms: the first is due at 2 000
    expect(warmed.size).toBe(0); // nothing fired yet: nothing read ahead
    clock.runAll();
    expect(warmedBeforeFiring).toEqual(Array.from({ length: 50 }, () => true));
    expect([...warmed].every((index) => index % 2 === 0)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/model/manual-clock.ts";

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
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_CHUNK_MS, RealClock } from "../../../src/clock/real-clock.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("RealClock", () => {
  it("never fires before the delay has passed on the monotonic clock", async () => {
    const clock = new RealClock();
    const lateness = await Promise.all(
      [1, 5, 12.5, 20].map(
        (delayMs) =>
          new Promise<number>((resolve) => {
            const start = clock.now();
            clock.schedule(delayMs, () => resolve(clock.now() - start - delayMs));
          }),
      ),
    );
    for (const late of lateness) expect(late).toBeGreaterThanOrEqual(0);
  });

  it("does not fire early for delays above 2^31-1 ms, where setTimeout alone fires after 1 ms", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    let fired = false;
    clock.schedule(MAX_TIMER_CHUNK_MS + 5_000, () => {
      fired = true;
    });
    vi.advanceTimersByTime(1);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(MAX_TIMER_CHUNK_MS);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(4_999);
    expect(fired).toBe(true);
  });

  it("waits for years in chunks, and cancel stops the chain", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    let fired = false;
    const timer = clock.schedule(3 * MAX_TIMER_CHUNK_MS, () => {
      fired = true;
    });
    vi.advanceTimersByTime(2 * MAX_TIMER_CHUNK_MS);
    expect(vi.getTimerCount()).toBe(1);
    clock.cancel(timer);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(2 * MAX_TIMER_CHUNK_MS);
    expect(fired).toBe(false);
  });

  it("keeps one Node timer for all its timers, set for the earliest: one armed while others fire does not delay them", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    const fired: string[] = [];
    clock.schedule(10, () => fired.push("a"));
    clock.schedule(1, () => {
      fired.push("x");
      clock.schedule(1_000, () => fired.push("y"));
    });
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(9);
    expect(fired).toEqual(["x", "a"]);
    vi.advanceTimersByTime(991);
    expect(fired).toEqual(["x", "a", "y"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("fires the others after a timer that threw", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    const fired: string[] = [];
    clock.schedule(5, () => {
      throw new Error("boom");
    });
    clock.schedule(5, () => fired.push("b"));
    clock.schedule(20, () => fired.push("c"));
    expect(() => vi.advanceTimersByTime(5)).toThrow("boom");
    vi.advanceTimersByTime(15);
    expect(fired).toEqual(["b", "c"]);
  });

  it("sets its Node timer again when the one it set was lost (a test's fake timers cleared) and its time long past", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    const fired: string[] = [];
    clock.schedule(100, () => fired.push("lost"));
    vi.clearAllTimers();
    vi.advanceTimersByTime(2_000);
    expect(fired).toEqual([]);
    clock.schedule(10, () => fired.push("next"));
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(["lost", "next"]);
  });

  it("never fires an Infinity delay", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    clock.schedule(Infinity, () => {
      throw new Error("fired");
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("arms an object that is its own timer: re-arming replaces the pending arming, cancel stops it", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const clock = new RealClock();
    const fired: number[] = [];
    const owner = { clockSlot: undefined as unknown, onTimer: () => fired.push(performance.now()) };
    const start = performance.now();
    clock.arm(owner, 50);
    clock.arm(owner, 20);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([start + 20]);
    clock.arm(owner, 10);
    clock.cancel(owner);
    vi.advanceTimersByTime(100);
    expect(fired).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

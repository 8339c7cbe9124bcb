import { CallbackTimer, type Clock, type Timer, type TimerOwner, timerOwner } from "./clock.ts";

/**
 * Node's setTimeout fires after 1 ms for any delay above 2^31-1 ms, and libuv's cached
 * loop time can let a timer fire a fraction of a millisecond early. The real clock
 * therefore waits in chunks of at most this size and re-checks the target on every wake.
 */
export const MAX_TIMER_CHUNK_MS = 2 ** 31 - 1;

/** The real clock's state for one timer owner, made at its first arming and kept in its clockSlot. */
class RealTimer {
  dueAt = Number.NaN;
  handle: NodeJS.Timeout | undefined = undefined;
  private readonly clock: RealClock;
  private readonly owner: TimerOwner;

  constructor(clock: RealClock, owner: TimerOwner) {
    this.clock = clock;
    this.owner = owner;
  }

  /** A setTimeout callback made once per owner, not once per wake. */
  readonly wake = (): void => {
    const remaining = this.dueAt - this.clock.now();
    if (remaining <= 0) {
      this.handle = undefined;
      this.owner.onTimer();
      return;
    }
    this.handle = setTimeout(this.wake, Math.min(Math.ceil(remaining), MAX_TIMER_CHUNK_MS));
  };
}

export class RealClock implements Clock {
  now(): number {
    return globalThis.performance.now();
  }

  schedule(delayMs: number, callback: () => void): Timer {
    const timer = new CallbackTimer(callback);
    this.arm(timer, delayMs);
    return timer.asTimer();
  }

  arm(owner: TimerOwner, delayMs: number): void {
    this.cancel(owner);
    const timer = (owner.clockSlot as RealTimer | undefined) ?? new RealTimer(this, owner);
    owner.clockSlot = timer;
    const safeDelay = delayMs > 0 ? delayMs : 0;
    timer.dueAt = this.now() + safeDelay;
    if (timer.dueAt === Infinity) return;
    timer.handle = setTimeout(timer.wake, Math.min(Math.ceil(safeDelay), MAX_TIMER_CHUNK_MS));
  }

  cancel(timer: Timer | TimerOwner): void {
    const realTimer = timerOwner(timer).clockSlot as RealTimer | undefined;
    if (realTimer?.handle !== undefined) clearTimeout(realTimer.handle);
    if (realTimer !== undefined) realTimer.handle = undefined;
  }
}

export const realClock = new RealClock();

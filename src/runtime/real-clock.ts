import type { Clock, Timer } from "../model/clock.ts";

/**
 * Node's setTimeout fires after 1 ms for any delay above 2^31-1 ms, and libuv's cached
 * loop time can let a timer fire a fraction of a millisecond early. The real clock
 * therefore waits in chunks of at most this size and re-checks the target on every wake.
 */
export const MAX_TIMER_CHUNK_MS = 2 ** 31 - 1;

interface RealTimer extends Timer {
  handle: NodeJS.Timeout | undefined;
}

export class RealClock implements Clock {
  now(): number {
    return globalThis.performance.now();
  }

  schedule(delayMs: number, callback: () => void): Timer {
    const safeDelay = delayMs > 0 ? delayMs : 0;
    const timer: RealTimer = { dueAt: this.now() + safeDelay, handle: undefined };
    if (timer.dueAt === Infinity) return timer;
    const arm = (): void => {
      const remaining = timer.dueAt - this.now();
      if (remaining <= 0) {
        timer.handle = undefined;
        callback();
        return;
      }
      timer.handle = setTimeout(arm, Math.min(Math.ceil(remaining), MAX_TIMER_CHUNK_MS));
    };
    timer.handle = setTimeout(arm, Math.min(Math.ceil(safeDelay), MAX_TIMER_CHUNK_MS));
    return timer;
  }

  cancel(timer: Timer): void {
    const realTimer = timer as RealTimer;
    if (realTimer.handle !== undefined) clearTimeout(realTimer.handle);
    realTimer.handle = undefined;
  }
}

export const realClock = new RealClock();

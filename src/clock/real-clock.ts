import { CallbackTimer, type Clock, type Timer, type TimerOwner, timerOwner } from "./clock.ts";
import { EventQueue } from "./event-queue.ts";

/**
 * Node's setTimeout fires after 1 ms for any delay above 2^31-1 ms, and libuv's cached
 * loop time can let a timer fire a fraction of a millisecond early. The real clock
 * therefore waits in chunks of at most this size and re-checks the target on every wake.
 */
export const MAX_TIMER_CHUNK_MS = 2 ** 31 - 1;

/** An owner's clockSlot when it is not armed; armed, it holds its arming's sequence number. */
const DISARMED = -1;

/** How late a wake may be before an arming takes it for lost and sets it again (a stopped process's wake is late too: harmless). */
const LOST_WAKE_MS = 1_000;

/** Whether an owner has an arming pending (a new owner's slot is undefined). */
const isArmed = (owner: TimerOwner): boolean => typeof owner.clockSlot === "number" && owner.clockSlot !== DISARMED;

/**
 * The clock of the real programs: the monotonic time, and every timer in one queue of our own
 * (the simulator's, src/clock/event-queue.ts) under one Node timer set for the earliest. A Node
 * timer per owner cost a Timeout, and for waits of many lengths a TimersList each: about 700
 * bytes of each of a client's idle users, and a Timeout of garbage at every arming (BENCHMARKS.md).
 * Cancelling or re-arming leaves the queue's entry, whose sequence number is then not its
 * owner's, to be skipped when it comes up; so that a program with nothing armed can end, the
 * Node timer is cleared once no owner is armed. Unlike Node's own timers, the timers due at one
 * wake run one after the other with no microtask between them. The queue's cursor moves to its
 * earliest entry when the clock looks for the next wake: with only a far timer pending (a wait of
 * days), the entries armed meanwhile go to its small heap, correct but slower, until time reaches it.
 */
export class RealClock implements Clock {
  private sequence = 0;
  private readonly queue = new EventQueue<TimerOwner>(this.now());
  /** Owners armed, not yet fired nor cancelled. */
  private armed = 0;
  private handle: NodeJS.Timeout | undefined = undefined;
  /** When the Node timer wakes, if set. */
  private wakeAt = Infinity;

  now(): number {
    return globalThis.performance.now();
  }

  schedule(delayMs: number, callback: () => void): Timer {
    const timer = new CallbackTimer(callback);
    this.arm(timer, delayMs);
    return timer.asTimer();
  }

  arm(owner: TimerOwner, delayMs: number): void {
    const now = this.now();
    const dueAt = now + (delayMs > 0 ? delayMs : 0); // also maps NaN to 0
    if (dueAt === Infinity) {
      this.cancel(owner);
      return;
    }
    // Armed again, it stays counted: its earlier entry is stale from here.
    if (!isArmed(owner)) this.armed++;
    const sequence = this.sequence++;
    owner.clockSlot = sequence;
    this.queue.push(dueAt, sequence, owner);
    // A wake long overdue never came (its Node timer was lost, as a test's fake timers lose it): set it again.
    if (dueAt < this.wakeAt || this.wakeAt + LOST_WAKE_MS < now) this.setWake(Math.min(dueAt, this.wakeAt));
  }

  cancel(timer: Timer | TimerOwner): void {
    const owner = timerOwner(timer);
    if (!isArmed(owner)) return;
    owner.clockSlot = DISARMED;
    if (--this.armed === 0) this.clearWake();
  }

  /** Fires every live entry due by now that was armed before this wake, in order; then sets the Node timer for the next. */
  private readonly wake = (): void => {
    this.handle = undefined;
    this.wakeAt = Infinity;
    const now = this.now();
    // What the timers fired here arm, even at once, waits for the next wake, as with Node's own timers.
    const armedBefore = this.sequence;
    const queue = this.queue;
    try {
      while (queue.readyLive() && queue.topDueAt() <= now && queue.topSequence() < armedBefore) {
        const owner = queue.topItem()!;
        queue.pop();
        // Disarmed before it runs, which may arm it again.
        owner.clockSlot = DISARMED;
        this.armed--;
        owner.onTimer();
      }
    } finally {
      // Also after a timer that threw: the others still fire.
      // The timers fired may have set it for their own arming; an entry due sooner, or left by a throw, comes first.
      if (this.armed > 0 && queue.readyLive() && queue.topDueAt() < this.wakeAt) this.setWake(queue.topDueAt());
    }
  };

  private setWake(dueAt: number): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.wakeAt = dueAt;
    const delay = Math.max(Math.ceil(dueAt - this.now()), 0);
    this.handle = setTimeout(this.wake, Math.min(delay, MAX_TIMER_CHUNK_MS));
  }

  private clearWake(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
    this.wakeAt = Infinity;
  }
}

export const realClock = new RealClock();

/**
 * Time as an argument: every model that waits receives a Clock, so the real programs can
 * drive it with Node timers and the simulator and tests with a virtual clock.
 * All times are milliseconds (fractions allowed).
 */
export interface Clock {
  /** Current time in milliseconds; monotonic, arbitrary origin. */
  now(): number;
  /**
   * Runs `callback` once, never earlier than `delayMs` after now. A delay of Infinity
   * never fires. Negative or NaN delays are treated as 0.
   */
  schedule(delayMs: number, callback: () => void): Timer;
  /**
   * Arms an object that is its own timer to fire once, `delayMs` from now, with the delay
   * rules of `schedule`; an arming still pending is replaced. Arming counts as scheduling
   * for the order of timers due at the same instant.
   */
  arm(owner: TimerOwner, delayMs: number): void;
  /** Cancels a timer that has not fired yet; cancelling twice or after firing is a no-op. */
  cancel(timer: Timer | TimerOwner): void;
  /**
   * True when every timer fires exactly at its due time (a virtual clock), so that code
   * measuring lateness may take it as 0 without reading when it planned to fire.
   */
  readonly punctual?: boolean;
}

declare const timerBrand: unique symbol;

/** Opaque handle returned by Clock.schedule. */
export interface Timer {
  readonly [timerBrand]: true;
}

/**
 * An object that is its own timer, for code that sets a timer on every event (a simulated
 * user's wait and deadline, the service queue's head): armed again and again, it costs
 * no timer object and no closure per event, and the clock reaches the owner without a
 * second object in between, which is what lets the simulator run millions of events a
 * second. The owner initialises `clockSlot` to undefined and leaves it to the clock.
 */
export interface TimerOwner {
  /** The clock's bookkeeping for this timer. */
  clockSlot: unknown;
  /** Runs when the timer fires. */
  onTimer(): void;
  /**
   * Reads, without changing anything, the memory that onTimer will touch first beyond the
   * owner itself, and returns a number read from it. The simulator's clock and server models
   * read owners a little before they fire, a batch at a time, so that the processor fetches
   * them from memory in parallel; this lets them fetch the rest too (a simulated user's
   * times, kept apart from the user: at a million users, reading them one cache miss at a
   * time took two fifths of the run's profile). Optional: most owners have nothing apart.
   */
  warm?(): number;
}

/** What code that reads owners ahead sees of each: its timer slot, and its optional warm (TimerOwner). */
export interface WarmableOwner {
  readonly clockSlot?: unknown;
  warm?(): number;
}

/**
 * Reads an owner (a server model's context may be none) and what it keeps apart, for code
 * that reads owners ahead in a batch; returns a number read, for the caller to keep so that
 * the reads stay.
 */
export function warmOwner(owner: WarmableOwner | undefined): number {
  if (owner === undefined || owner.clockSlot === undefined) return 0;
  return owner.warm === undefined ? 1 : owner.warm();
}

/** What Clock.schedule arms: a callback as a timer owner, for clocks to share. */
export class CallbackTimer implements TimerOwner {
  clockSlot: unknown = undefined;
  private readonly callback: () => void;

  constructor(callback: () => void) {
    this.callback = callback;
  }

  onTimer(): void {
    this.callback();
  }

  /** The handle Clock.schedule returns (the Timer brand exists only for the type checker). */
  asTimer(): Timer {
    return this as unknown as Timer;
  }
}

/** The owner behind a handle from Clock.schedule, or the owner itself. */
export function timerOwner(timer: Timer | TimerOwner): TimerOwner {
  return timer as unknown as TimerOwner;
}

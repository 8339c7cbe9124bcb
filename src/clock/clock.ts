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
}

/**
 * Where owners of one kind keep, apart from themselves, what they touch first when they fire:
 * a row of a typed array shared by all of them, from element `warmRowStride × index` (a
 * simulated user's times: a number field that holds fractions would be an object of its own).
 */
export interface OwnerRows {
  readonly warmRows?: Float64Array | undefined;
  readonly warmRowStride?: number;
}

/**
 * What code that reads owners ahead sees of each (a timer owner, a server model's client): its
 * number and its context, whose rows hold its memory apart, where it has some.
 */
export interface WarmableOwner {
  readonly context?: OwnerRows | undefined;
  readonly index?: number;
}

/**
 * Reads an owner and its row, for code that reads owners a little before they fire or are
 * answered, a batch at a time, so that the processor fetches them from memory in parallel
 * rather than one cache miss at a time (at a million simulated users, those misses took two
 * fifths of a run's profile). Returns a number read, for the caller to keep so that the reads
 * stay. Plain field reads, which V8 compiles inline: a method call per owner (the first
 * version) let fewer owners' reads overlap, and took 1.1 times the run (BENCHMARKS.md).
 */
export function warmOwner(owner: WarmableOwner | undefined): number {
  if (owner === undefined) return 0;
  const context = owner.context;
  const rows = context?.warmRows;
  return rows === undefined ? 1 : rows[context!.warmRowStride! * owner.index!]!;
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

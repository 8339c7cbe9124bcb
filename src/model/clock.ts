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
  /** Cancels a timer that has not fired yet; cancelling twice or after firing is a no-op. */
  cancel(timer: Timer): void;
}

/** Opaque handle returned by Clock.schedule. */
export interface Timer {
  readonly dueAt: number;
}

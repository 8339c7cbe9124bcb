/**
 * The hard limits of the whole probe, shared by its steps and their users: the requests in all
 * (-max-requests), the rate (-max-rate: over any one-second window), and the wall clock
 * (-max-time: nothing is sent after the deadline, and `stop` aborts whatever is in flight then).
 *
 * Each is checked at the instant a request is let go, after any wait, never at a reservation
 * made before it: a user that waited past the deadline sends nothing. The rate is held by a
 * sliding window of the last sends' instants, so timers that fire late and together (a busy
 * event loop) cannot let more through than the window allows; a pace spreads the sends evenly
 * within it. Users that must wait queue in one line served by one timer, so a step of 50 000
 * users costs 50 000 pending promises, not 50 000 timers and abort listeners.
 */
export class ProbeBudget {
  requestsLeft: number;
  readonly deadlineAt: number;
  /** Aborted at the deadline or on the interrupt: requests in flight listen to it. */
  readonly stop: AbortSignal;
  /** A request waited for the rate ceiling: the throughput measured is the probe's, not the service's. */
  rateBound = false;
  sent = 0;
  private readonly stopController = new AbortController();
  private readonly deadlineTimer: NodeJS.Timeout;
  private readonly window: RateWindow;
  private readonly waiting: ((sent: boolean) => void)[] = [];
  private waitingHead = 0;
  private pumpTimer: NodeJS.Timeout | undefined;
  private deadlinePassed = false;
  private readonly interrupt: AbortSignal;
  private readonly stopAll = () => {
    this.stopController.abort();
    this.releaseWaiting();
  };

  constructor(maxRequests: number, maxRatePerSec: number, maxTimeMs: number, interrupt: AbortSignal, now = performance.now()) {
    this.interrupt = interrupt;
    this.requestsLeft = maxRequests;
    this.deadlineAt = now + maxTimeMs;
    this.window = new RateWindow(maxRatePerSec);
    this.stop = this.stopController.signal;
    this.deadlineTimer = setTimeout(
      () => {
        // A timer may fire up to a millisecond before performance.now() reaches the deadline.
        this.deadlinePassed = true;
        this.stopAll();
      },
      Math.max(0, this.deadlineAt - performance.now()),
    );
    if (interrupt.aborted) this.stopAll();
    else interrupt.addEventListener("abort", this.stopAll, { once: true });
  }

  /** The highest rate the window lets through, requests per second (a little under -max-rate: see RateWindow). */
  get ceilingPerSec(): number {
    return this.window.ceilingPerSec;
  }

  /** Takes one request's place: resolves true at the instant it may be sent, false once the requests or the time are spent. */
  take(): Promise<boolean> {
    if (this.waitingHead === this.waiting.length && this.trySend()) return Promise.resolve(true);
    if (this.stop.aborted || this.exhausted !== undefined) return Promise.resolve(false);
    this.rateBound = true;
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedulePump();
    });
  }

  get exhausted(): "requests" | "time" | undefined {
    if (this.requestsLeft <= 0) return "requests";
    if (this.deadlinePassed || performance.now() >= this.deadlineAt) return "time";
    return undefined;
  }

  /** Stops the deadline's timer and lets every waiting user go empty-handed. */
  dispose(): void {
    clearTimeout(this.deadlineTimer);
    this.interrupt.removeEventListener("abort", this.stopAll);
    this.releaseWaiting();
  }

  private trySend(): boolean {
    const now = performance.now();
    if (this.stop.aborted || this.requestsLeft <= 0 || now >= this.deadlineAt || !this.window.admits(now)) return false;
    this.window.record(now);
    this.requestsLeft--;
    this.sent++;
    return true;
  }

  private schedulePump(): void {
    if (this.pumpTimer !== undefined) return;
    const waitMs = Math.max(1, this.window.nextAdmissionAt() - performance.now());
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = undefined;
      while (this.waitingHead < this.waiting.length && this.trySend()) this.waiting[this.waitingHead++]!(true);
      if (this.stop.aborted || this.exhausted !== undefined) this.releaseWaiting();
      else if (this.waitingHead < this.waiting.length) this.schedulePump();
      this.compactWaiting();
    }, waitMs);
  }

  private releaseWaiting(): void {
    clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    while (this.waitingHead < this.waiting.length) this.waiting[this.waitingHead++]!(false);
    this.compactWaiting();
  }

  /**
   * Drops the users already served from the front of the queue once they are half of it: in a
   * step held at the rate the queue never drains, and without this it kept one settled resolver
   * per send. Each served user is moved at most once, so the cost stays constant per send.
   */
  private compactWaiting(): void {
    if (this.waitingHead === 0 || this.waitingHead * 2 < this.waiting.length) return;
    this.waiting.splice(0, this.waitingHead);
    this.waitingHead = 0;
  }

  /** The queue's length as held in memory, served users not yet dropped included (for tests of its bound). */
  get heldWaiting(): number {
    return this.waiting.length;
  }
}

/**
 * Sends arrive at the service a little apart from the instants the probe let them go (the
 * network, the service's accept loop): the window the probe counts in is this much longer than
 * a second, so that any second of arrivals holds no more than -max-rate.
 */
export const RATE_WINDOW_MARGIN_MS = 50;

/** A slack the pace forgives, so that timers' millisecond grain does not hold a fast rate back. */
const PACE_SLACK_MS = 5;

/**
 * At most `capacity` sends in any `windowMs`: floor(-max-rate) in a second and the margin, or
 * for a rate under 1/s, one in 1/rate seconds and the margin. The sends are paced
 * windowMs/capacity apart, with a few milliseconds' slack.
 */
class RateWindow {
  private readonly capacity: number;
  private readonly windowMs: number;
  private readonly paceMs: number;
  /** The last `capacity` send instants, a ring that grows as sends come. */
  private readonly instants: number[] = [];
  private oldest = 0;
  private paceAt = -Infinity;

  constructor(maxRatePerSec: number) {
    this.capacity = Math.max(1, Math.floor(maxRatePerSec));
    this.windowMs = Math.max(1000, (1000 * this.capacity) / maxRatePerSec) + RATE_WINDOW_MARGIN_MS;
    this.paceMs = this.windowMs / this.capacity;
  }

  get ceilingPerSec(): number {
    return (1000 * this.capacity) / this.windowMs;
  }

  admits(now: number): boolean {
    return now >= this.nextAdmissionAt();
  }

  nextAdmissionAt(): number {
    const full = this.instants.length === this.capacity;
    return Math.max(this.paceAt, full ? this.instants[this.oldest]! + this.windowMs : -Infinity);
  }

  record(now: number): void {
    if (this.instants.length < this.capacity) this.instants.push(now);
    else {
      this.instants[this.oldest] = now;
      this.oldest = (this.oldest + 1) % this.capacity;
    }
    this.paceAt = Math.max(this.paceAt, now - PACE_SLACK_MS) + this.paceMs;
  }
}

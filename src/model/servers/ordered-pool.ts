import { CallbackTimer, type Clock } from "../../clock/clock.ts";
import type { FaultConditions } from "../faults/conditions.ts";
import type { ThreadPoolOptions } from "./queue.ts";
import type { Completion, CompletionCallback, ServerModel, ServiceSnapshot, ServiceTicket } from "./server-model.ts";
import { ABANDONED, moveTickets, TicketRingServer } from "./ticket-ring.ts";

/** Two completions closer than a nanosecond are due together (as ThreadPool's). */
const DUE_TOLERANCE_MS = 1e-6;

/**
 * The queue model's thread pool where requests leave in the order they came: a fifo queue, a
 * constant service time that nothing changes, no cancel-on-disconnect, no deadlines (what
 * most runs of the simulator ask for). Then the requests started are the tickets from the
 * oldest held up to a front, those waiting the tickets after it, and each completes at its
 * start plus the service time, in ticket order: one ring of requests by ticket and two
 * pointers do what ThreadPool does with its request slots, its list of waiting tickets and
 * its completions queue, as the exponential model's ServiceQueue does with its one ring.
 * On a million clients without an outage ThreadPool took 1.13 times the exponential model's
 * CPU; this pool, with the same answers at the same instants, 0.98 (BENCHMARKS.md).
 *
 * It answers exactly as ThreadPool does, event for event (its test runs both side by side):
 * a request starts when ThreadPool would start it (at once, or at the instant a completion
 * frees a thread), so its completion is due at the same time; completions due together
 * leave in ticket order, as ThreadPool's (time, ticket) order has them; a capacity fault
 * changes the threads the same way. A slow fault would let a later request finish first:
 * `setFaultConditions` refuses one, and the queue model (kinds/queue.ts) picks this pool only where none
 * can come (`fixedServiceTime`).
 *
 * The held requests are the ring's tickets [head, tail) (TicketRingServer): [head, started)
 * are in threads, [started, tail) wait; the counters and the memory limit are ServerBookkeeping's.
 */
export class OrderedPool extends TicketRingServer implements ServerModel {
  /** When each request in a thread completes, by ticket, beside the ring's own arrays. */
  private dueAt = new Float64Array(this.arrivedAt.length);
  private started = 0;
  private threads: number;
  private readonly timer = new CallbackTimer(() => this.completeDue());
  private armedAt = Infinity;
  private stopped = false;

  private readonly options: ThreadPoolOptions;

  constructor(clock: Clock, options: ThreadPoolOptions) {
    if (options.serviceDist !== "constant" || options.queueOrder !== "fifo" || options.cancelOnDisconnect) {
      throw new Error("OrderedPool: only for a fifo queue with constant service times, without cancel-on-disconnect");
    }
    super(clock, options);
    this.options = options;
    this.threads = options.threads;
  }

  get concurrency(): number {
    return this.tail - this.head;
  }

  get queueLength(): number {
    return this.tail - this.started;
  }

  get threadsBusy(): number {
    return this.started - this.head;
  }

  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (deadlineAt !== undefined && deadlineAt !== Infinity) throw new Error("OrderedPool: requests with deadlines need ThreadPool");
    if (this.stopped) return undefined;
    const busy = this.started - this.head;
    const queued = this.tail - this.started;
    if (this.refuses(busy >= this.threads && queued >= this.options.queueLimit, busy + queued)) return undefined;
    const ticket = this.store(onComplete as CompletionCallback | undefined, context);
    // One waits only while every thread is busy: a free thread means none waits, and it is this one's.
    if (busy < this.threads) this.startNext();
    const held = this.tail - this.head;
    if (held > this.peak) this.peak = held;
    return ticket;
  }

  /** The client of `ticket` went away: its request stays where it is, for nobody. */
  abandon(ticket: ServiceTicket): void {
    if (this.markAbandoned(ticket)) this.abandonedInService++;
  }

  snapshot(): ServiceSnapshot {
    // Nothing is cancelled here (no cancel-on-disconnect): the count stays 0.
    return this.poolTally(this.tail - this.started, this.started - this.head, this.threads);
  }

  stop(): void {
    this.stopped = true;
    this.clock.cancel(this.timer);
    this.armedAt = Infinity;
  }

  /** Works under a fault from now on: threads × capacity (at least one) and the errors share; a slow fault is ThreadPool's. */
  setFaultConditions(conditions: FaultConditions): void {
    if (conditions.slowFactor !== 1) throw new Error("OrderedPool: a slow fault needs ThreadPool");
    this.errorRateOverride = conditions.errorRate;
    this.threads = Math.max(1, Math.round(this.options.threads * conditions.capacityFactor));
    this.fillThreads();
  }

  crash(): unknown[] {
    const lost = this.loseAll();
    this.started = this.tail;
    this.abandonedInService = 0;
    this.clock.cancel(this.timer);
    this.armedAt = Infinity;
    return lost;
  }

  /** The oldest waiting request takes a thread now; its completion is due a service time later. */
  private startNext(): void {
    const ticket = this.started++;
    // As ThreadPool's: the time read here, plus the mean, so that both give the same instant.
    const dueAt = this.clock.now() + this.options.serviceTimeMs;
    this.dueAt[ticket & (this.arrivedAt.length - 1)] = dueAt;
    if (dueAt < this.armedAt) this.arm(dueAt);
  }

  private fillThreads(): void {
    while (this.started - this.head < this.threads && this.started < this.tail) this.startNext();
  }

  private arm(dueAt: number): void {
    this.armedAt = dueAt;
    this.clock.arm(this.timer, dueAt - this.clock.now());
  }

  private completeDue(): void {
    this.armedAt = Infinity;
    const now = this.clock.now();
    // The mask is read afresh each time: an answer may admit requests that grow the ring.
    while (this.head < this.started && this.dueAt[this.head & (this.arrivedAt.length - 1)]! <= now + DUE_TOLERANCE_MS) {
      // Only those in threads: a waiting request's completion is not due yet, unlike ServiceQueue's.
      if (this.head >= this.warmedTo) this.warmAhead(this.started);
      this.complete(this.head & (this.arrivedAt.length - 1), now);
    }
    // arm reads the time again: on a real clock the answers above took some.
    if (this.head < this.started && !this.stopped) this.arm(this.dueAt[this.head & (this.arrivedAt.length - 1)]!);
  }

  /** The head request leaves its thread, and the oldest waiting one takes it before the answer goes out. */
  private complete(slot: number, now: number): void {
    const abandoned = this.states[slot] === ABANDONED;
    const callback = this.callbacks[slot];
    const context = this.contexts[slot];
    const inServer = now - this.arrivedAt[slot]!;
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    this.head++;
    this.noteTimeInServer(inServer);
    // The oldest waiting request takes the freed thread before the answer goes out (as ThreadPool's).
    this.fillThreads();
    this.answer(abandoned, callback, context);
  }

  protected override grow(): void {
    this.dueAt = moveTickets(this.dueAt, new Float64Array(this.dueAt.length * 2), this.head, this.tail);
    super.grow();
  }
}

import { CallbackTimer, type Clock, type WarmableOwner, warmOwner } from "../../clock/clock.ts";
import type { FaultConditions } from "../faults/conditions.ts";
import { drawsInjectedError } from "./error-injection.ts";
import type { ThreadPoolOptions } from "./queue.ts";
import type { Completion, OutOfMemoryEvent, ServerModel, ServiceSnapshot, ServiceTicket } from "./server-model.ts";
import { moveTickets } from "./ticket-ring.ts";

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
 */
type CompletionCallback = (context: unknown, completion: Completion) => void;

/** A request's state in the ring: its client waits, or has gone away. */
const WAITED_FOR = 0;
const ABANDONED = 1;

/** Two completions closer than a nanosecond are due together (as ThreadPool's). */
const DUE_TOLERANCE_MS = 1e-6;
const INITIAL_CAPACITY = 1024;
/** Completions whose clients warmAhead reads at once. */
const WARM_AHEAD = 32;

export class OrderedPool implements ServerModel {
  // Tickets [head, tail) are held, in a ring of parallel arrays indexed by ticket modulo the
  // capacity (a power of two); [head, started) are in threads, [started, tail) wait.
  private arrivedAt = new Float64Array(INITIAL_CAPACITY);
  private dueAt = new Float64Array(INITIAL_CAPACITY);
  private states = new Uint8Array(INITIAL_CAPACITY);
  private callbacks: (CompletionCallback | undefined)[] = new Array<CompletionCallback | undefined>(INITIAL_CAPACITY).fill(undefined);
  private contexts: unknown[] = new Array<unknown>(INITIAL_CAPACITY).fill(undefined);
  private head = 0;
  private started = 0;
  private tail = 0;
  private threads: number;
  private readonly maxInService: number;
  private readonly timer = new CallbackTimer(() => this.completeDue());
  private armedAt = Infinity;
  /** Tickets below this have had their clients read ahead (warmAhead); `warmed` keeps what was read alive. */
  private warmedTo = 0;
  private warmed = 0;
  private errorRateOverride: number | undefined = undefined;
  private lastDelay = 0;
  private peak = 0;
  private peakDelay = 0;
  private mostStored = 0;
  private admittedTotal = 0;
  private servedTotal = 0;
  private abandonedTotal = 0;
  private abandonedInService = 0;
  private shedTotal = 0;
  private expiredTotal = 0;
  private errorsInjectedTotal = 0;
  private outOfMemoryEvent: OutOfMemoryEvent | undefined = undefined;
  private stopped = false;

  private readonly clock: Clock;
  private readonly options: ThreadPoolOptions;

  constructor(clock: Clock, options: ThreadPoolOptions) {
    if (options.serviceDist !== "constant" || options.queueOrder !== "fifo" || options.cancelOnDisconnect) {
      throw new Error("OrderedPool: only for a fifo queue with constant service times, without cancel-on-disconnect");
    }
    this.clock = clock;
    this.options = options;
    this.threads = options.threads;
    this.maxInService = options.maxInService ?? Infinity;
  }

  get concurrency(): number {
    return this.tail - this.head;
  }

  get lastDelayMs(): number {
    return this.lastDelay;
  }

  get queueLength(): number {
    return this.tail - this.started;
  }

  get threadsBusy(): number {
    return this.started - this.head;
  }

  get storedRequests(): number {
    return this.tail - this.head;
  }

  get mostStoredRequests(): number {
    return this.mostStored;
  }

  get countedRequests(): number {
    return 0;
  }

  get outOfMemory(): OutOfMemoryEvent | undefined {
    return this.outOfMemoryEvent;
  }

  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (deadlineAt !== undefined && deadlineAt !== Infinity) throw new Error("OrderedPool: requests with deadlines need ThreadPool");
    if (this.outOfMemoryEvent !== undefined || this.stopped) return undefined;
    const busy = this.started - this.head;
    const queued = this.tail - this.started;
    if (busy >= this.threads && queued >= this.options.queueLimit) {
      this.shedTotal++;
      return undefined;
    }
    if (busy + queued >= this.maxInService) {
      this.outOfMemoryEvent = { atMs: this.clock.now(), inService: busy + queued };
      this.stop();
      return undefined;
    }
    if (this.tail - this.head === this.arrivedAt.length) this.grow();
    const ticket = this.tail++;
    const slot = ticket & (this.arrivedAt.length - 1);
    this.arrivedAt[slot] = this.clock.now();
    this.states[slot] = WAITED_FOR;
    this.callbacks[slot] = onComplete as CompletionCallback | undefined;
    this.contexts[slot] = context;
    this.admittedTotal++;
    // One waits only while every thread is busy: a free thread means none waits, and it is this one's.
    if (busy < this.threads) this.startNext();
    const held = this.tail - this.head;
    if (held > this.peak) this.peak = held;
    if (held > this.mostStored) this.mostStored = held;
    return ticket;
  }

  expireOnArrival(deadlineAt: number): boolean {
    if (deadlineAt > this.clock.now()) return false;
    this.expiredTotal++;
    return true;
  }

  /** The client of `ticket` went away: its request stays where it is, for nobody. */
  abandon(ticket: ServiceTicket): void {
    if (ticket < this.head || ticket >= this.tail) return;
    const slot = ticket & (this.arrivedAt.length - 1);
    if (this.states[slot] === ABANDONED) return;
    this.states[slot] = ABANDONED;
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    this.abandonedInService++;
  }

  snapshot(): ServiceSnapshot {
    const held = this.tail - this.head;
    return {
      concurrency: held,
      lastDelayMs: this.lastDelay,
      peakConcurrency: this.peak,
      peakDelayMs: this.peakDelay,
      admitted: this.admittedTotal,
      served: this.servedTotal,
      abandoned: this.abandonedTotal,
      abandonedInService: this.abandonedInService,
      cancelled: 0,
      shed: this.shedTotal,
      expired: this.expiredTotal,
      errorsInjected: this.errorsInjectedTotal,
      queueLength: this.tail - this.started,
      threadsBusy: this.started - this.head,
      threads: this.threads,
    };
  }

  resetPeak(): void {
    this.peak = this.tail - this.head;
    this.peakDelay = 0;
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
    const lost: unknown[] = [];
    const mask = this.arrivedAt.length - 1;
    for (let ticket = this.head; ticket < this.tail; ticket++) {
      const slot = ticket & mask;
      if (this.states[slot] === WAITED_FOR && this.callbacks[slot] !== undefined) lost.push(this.contexts[slot]);
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
    }
    this.head = this.tail;
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
      if (this.head >= this.warmedTo) this.warmAhead();
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
    this.lastDelay = inServer;
    if (inServer > this.peakDelay) this.peakDelay = inServer;
    this.fillThreads();
    if (abandoned) {
      this.abandonedTotal++;
      this.abandonedInService--;
    } else {
      this.servedTotal++;
      const completion = this.injectError() ? "injected-error" : "served";
      callback?.(context, completion);
    }
  }

  /** Reads the clients of the next requests to complete, a batch at a time (see ThreadPool.warmAhead). */
  private warmAhead(): void {
    const mask = this.arrivedAt.length - 1;
    const end = Math.min(this.started, this.head + WARM_AHEAD);
    let seen = 0;
    for (let ticket = this.head; ticket < end; ticket++) seen += warmOwner(this.contexts[ticket & mask] as WarmableOwner | undefined);
    this.warmed += seen;
    this.warmedTo = end;
  }

  private injectError(): boolean {
    if (!drawsInjectedError(this.options.errorInjection, this.errorRateOverride)) return false;
    this.errorsInjectedTotal++;
    return true;
  }

  private grow(): void {
    const size = this.arrivedAt.length * 2;
    const { head, tail } = this;
    this.arrivedAt = moveTickets(this.arrivedAt, new Float64Array(size), head, tail);
    this.dueAt = moveTickets(this.dueAt, new Float64Array(size), head, tail);
    this.states = moveTickets(this.states, new Uint8Array(size), head, tail);
    this.callbacks = moveTickets(this.callbacks, new Array<CompletionCallback | undefined>(size).fill(undefined), head, tail);
    this.contexts = moveTickets(this.contexts, new Array<unknown>(size).fill(undefined), head, tail);
  }
}

import type { Random } from "../../backoff/random.ts";
import { CallbackTimer, type Clock, type WarmableOwner, warmOwner } from "../../clock/clock.ts";
import { EventFifoHeap } from "../../clock/event-fifo-heap.ts";
import { type BookkeepingOptions, ServerBookkeeping } from "./bookkeeping.ts";
import { RequestSlots } from "./request-slots.ts";
import type { Completion, CompletionCallback, ServerModel, ServiceSnapshot, ServiceTicket } from "./server-model.ts";
import type { FaultConditions } from "../faults/conditions.ts";

/**
 * The queue model: a thread pool, as most real services are (a gunicorn server with N sync
 * workers behaves exactly like it: 4 workers × 50 ms answer 4, 8 and 12 concurrent requests
 * in rounds at 53, 101 and 150 ms). `threads` requests are in service at once, each for a
 * service time of its own drawn when it starts; the rest wait in a queue, served oldest
 * first (fifo) or newest first (lifo), at most `queueLimit` of them, beyond which a request
 * is answered 503 at once. A client that times out leaves its request where it is, in the
 * queue or in a thread, unless `cancelOnDisconnect`: the stale work in the queue is what
 * makes retries metastable here. With deadlines, a request whose deadline passed while it
 * waited is dropped when it reaches a thread (a thread, once started, finishes its request).
 * Memory is bounded by `maxInService` (requests in the server, waiting or served), as for
 * every model (ServerBookkeeping, bookkeeping.ts, which keeps the counters too). Where
 * requests cannot leave out of order, the simulator uses OrderedPool (ordered-pool.ts), which
 * gives the same answers faster; this pool keeps its requests in RequestSlots, not in a ring
 * that only lets them leave oldest first.
 */
export type ServiceDistribution = "constant" | "exponential" | "lognormal";
export const SERVICE_DISTRIBUTIONS: readonly ServiceDistribution[] = ["constant", "exponential", "lognormal"];
export type QueueOrder = "fifo" | "lifo";
export const QUEUE_ORDERS: readonly QueueOrder[] = ["fifo", "lifo"];

/** What describes a thread pool, as its flags set it. */
export interface ThreadPoolShape {
  readonly threads: number;
  /** The mean service time, ms. */
  readonly serviceTimeMs: number;
  readonly serviceDist: ServiceDistribution;
  /** The lognormal's sigma (of the underlying normal); its mean stays serviceTimeMs. */
  readonly serviceSigma: number;
  readonly queueOrder: QueueOrder;
  /** Requests that may wait; Infinity for an unbounded queue. */
  readonly queueLimit: number;
}

export const DEFAULT_THREAD_POOL: ThreadPoolShape = {
  threads: 8,
  serviceTimeMs: 20,
  serviceDist: "constant",
  serviceSigma: 0.5,
  queueOrder: "fifo",
  queueLimit: Infinity,
};

export interface ThreadPoolOptions extends ThreadPoolShape, BookkeepingOptions {
  readonly cancelOnDisconnect: boolean;
  /** Draws the service times (not read for constant ones). */
  readonly random: Random;
}

/** A service time drawn from the pool's distribution, with the mean `meanMs`. */
export function drawServiceTimeMs(shape: ThreadPoolShape, meanMs: number, random: Random): number {
  switch (shape.serviceDist) {
    case "constant":
      return meanMs;
    case "exponential":
      return random.exponential(meanMs);
    case "lognormal": {
      const sigma = shape.serviceSigma;
      return Math.exp(random.normal(Math.log(meanMs) - (sigma * sigma) / 2, sigma));
    }
  }
}

/** A request's flags in the pool's slots: in a thread (else waiting for one), and abandoned by its client. */
const IN_THREAD = 1;
const ABANDONED = 2;

/** Two completions closer than a nanosecond are due together. */
const DUE_TOLERANCE_MS = 1e-6;
/** Cancelled requests left in the queue's array before it is compacted (at least as many as wait). */
const COMPACT_AFTER = 1024;
/** Completions whose clients warmAhead reads at once. */
const WARM_AHEAD = 32;

/** Answers the requests dropped at their deadline: their callbacks and contexts, in pairs. */
function answerExpired(expired: readonly unknown[] | undefined): void {
  if (expired === undefined) return;
  for (let index = 0; index < expired.length; index += 2) {
    (expired[index] as CompletionCallback | undefined)?.(expired[index + 1], "expired");
  }
}

export class ThreadPool extends ServerBookkeeping implements ServerModel {
  protected readonly options: ThreadPoolOptions;
  private threads: number;
  private serviceTimeFactor = 1;
  /** The requests held, waiting or in a thread, by ticket (protected for UpstreamPool, which reads their tickets, contexts, deadlines). */
  protected readonly requests = new RequestSlots();
  /** Tickets of waiting requests in arrival order, from `waitingHead`; cancelled ones are skipped when reached. */
  private waiting: number[] = [];
  private waitingHead = 0;
  private queued = 0;
  private busy = 0;
  /** Completions of the requests in threads, earliest first, keyed (due, ticket); in order with constant service times. */
  private readonly completions = new EventFifoHeap();
  /** Completions left before warmAhead reads the next batch; `warmed` keeps what was read alive. */
  private unwarmedIn = 0;
  private warmed = 0;
  private readonly timer = new CallbackTimer(() => this.completeDue());
  private armedAt = Infinity;
  private nextTicket = 0;
  private stopped = false;

  constructor(clock: Clock, options: ThreadPoolOptions) {
    super(clock, options);
    this.options = options;
    this.threads = options.threads;
  }

  /** Requests in the server: in a thread or waiting. */
  get concurrency(): number {
    return this.busy + this.queued;
  }

  get queueLength(): number {
    return this.queued;
  }

  get threadsBusy(): number {
    return this.busy;
  }

  get storedRequests(): number {
    return this.requests.size;
  }

  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (this.stopped || this.refuses(this.busy >= this.threads && this.queued >= this.options.queueLimit, this.busy + this.queued))
      return undefined;
    const ticket = this.nextTicket++;
    const now = this.clock.now();
    const slot = this.requests.add(ticket, now, deadlineAt ?? Infinity, onComplete as CompletionCallback | undefined, context);
    this.admittedTotal++;
    if (this.busy < this.threads) this.startService(slot);
    else {
      this.waiting.push(ticket);
      this.queued++;
    }
    // Every request held is waiting or in a thread (the slots hold the same ones).
    const held = this.busy + this.queued;
    if (held > this.peak) this.peak = held;
    if (held > this.mostStored) this.mostStored = held;
    return ticket;
  }

  /** The client of `ticket` went away: the request stays (abandoned), or with cancelOnDisconnect leaves the queue or its thread. */
  abandon(ticket: ServiceTicket): void {
    const requests = this.requests;
    const slot = requests.slotOf(ticket);
    if (slot < 0 || (requests.flags[slot]! & ABANDONED) !== 0) return;
    if (!this.options.cancelOnDisconnect) {
      requests.flags[slot] = requests.flags[slot]! | ABANDONED;
      requests.callbacks[slot] = undefined;
      requests.contexts[slot] = undefined;
      this.abandonedInService++;
      return;
    }
    const inThread = (requests.flags[slot]! & IN_THREAD) !== 0;
    // Its entry in the queue's array, or its completion, stays, and is skipped when it comes up.
    requests.remove(slot);
    this.cancelledTotal++;
    if (!inThread) {
      this.queued--;
      this.compactWaiting();
      return;
    }
    this.busy--;
    answerExpired(this.fillThreads());
  }

  snapshot(): ServiceSnapshot {
    return this.poolTally(this.queued, this.busy, this.threads);
  }

  /** Stops the timer; requests in the server never complete, and nothing more is admitted. */
  stop(): void {
    this.stopped = true;
    this.clock.cancel(this.timer);
    this.armedAt = Infinity;
  }

  /** Threads from now on (a capacity fault); requests in threads beyond them finish first. */
  setThreads(threads: number): void {
    this.threads = threads;
    answerExpired(this.fillThreads());
  }

  /** Service times drawn from now on are this many times the mean (a slow fault). */
  setServiceTimeFactor(factor: number): void {
    this.serviceTimeFactor = factor;
  }

  /** Works under a fault from now on: threads × capacity (at least one), service times × slow, the errors share. */
  setFaultConditions(conditions: FaultConditions): void {
    this.errorRateOverride = conditions.errorRate;
    this.setServiceTimeFactor(conditions.slowFactor);
    this.setThreads(Math.max(1, Math.round(this.options.threads * conditions.capacityFactor)));
  }

  /** The server dies: everything in it is lost; the contexts of the clients still waiting come back. Totals stay. */
  crash(): unknown[] {
    const lost: unknown[] = [];
    const requests = this.requests;
    for (const slot of requests.slotsInTicketOrder()) {
      if ((requests.flags[slot]! & ABANDONED) === 0 && requests.callbacks[slot] !== undefined) lost.push(requests.contexts[slot]);
    }
    requests.clear();
    this.waiting = [];
    this.waitingHead = 0;
    this.queued = 0;
    this.busy = 0;
    this.abandonedInService = 0;
    this.completions.clear();
    this.clock.cancel(this.timer);
    this.armedAt = Infinity;
    return lost;
  }

  private startService(slot: number): void {
    this.requests.flags[slot] = this.requests.flags[slot]! | IN_THREAD;
    this.busy++;
    this.beginService(slot);
  }

  /** The request in `slot` has its thread: its service time starts (UpstreamPool first makes its upstream call). */
  protected beginService(slot: number): void {
    // The time is read here, not passed down from admit and the completions: a fractional
    // number passed to a call that V8 does not inline is a new heap object, per request.
    const now = this.clock.now();
    const options = this.options;
    const meanMs = options.serviceTimeMs * this.serviceTimeFactor;
    const dueAt = now + (options.serviceDist === "constant" ? meanMs : drawServiceTimeMs(options, meanMs, options.random));
    this.completions.push(dueAt, this.requests.tickets[slot]!);
    if (dueAt < this.armedAt) this.arm(dueAt);
  }

  private arm(dueAt: number): void {
    this.armedAt = dueAt;
    this.clock.arm(this.timer, dueAt - this.clock.now());
  }

  /**
   * Takes waiting requests into free threads, in the queue's order. Returns those dropped at
   * their deadline (callback and context, in pairs), for the caller to answer once the threads
   * are taken (so that a client retrying at once cannot jump the queue) and after any answer
   * of its own.
   */
  private fillThreads(): unknown[] | undefined {
    let expired: unknown[] | undefined;
    const now = this.clock.now();
    const requests = this.requests;
    while (this.busy < this.threads && this.queued > 0) {
      const slot = this.takeWaiting();
      this.queued--;
      if (requests.deadlineAt[slot]! <= now) {
        this.expiredTotal++;
        if ((requests.flags[slot]! & ABANDONED) !== 0) this.abandonedInService--;
        else (expired ??= []).push(requests.callbacks[slot], requests.contexts[slot]);
        requests.remove(slot);
        continue;
      }
      this.startService(slot);
    }
    return expired;
  }

  /** The slot of the next waiting request in the queue's order (one is waiting); a cancelled one is no longer held. */
  private takeWaiting(): number {
    const requests = this.requests;
    if (this.options.queueOrder === "lifo") {
      const waiting = this.waiting;
      for (;;) {
        const slot = requests.slotOf(waiting.pop()!);
        if (slot >= 0) return slot;
      }
    }
    for (;;) {
      // Read this.waiting afresh each time: trimming it below replaces the array.
      const ticket = this.waiting[this.waitingHead]!;
      this.waitingHead++;
      if (this.waitingHead > COMPACT_AFTER && this.waitingHead * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.waitingHead);
        this.waitingHead = 0;
      }
      const slot = requests.slotOf(ticket);
      if (slot >= 0) return slot;
    }
  }

  /** Drops cancelled requests from the queue's array once they outnumber those waiting. */
  private compactWaiting(): void {
    const dead = this.waiting.length - this.waitingHead - this.queued;
    if (dead <= COMPACT_AFTER || dead <= this.queued) return;
    this.waiting = this.waiting.slice(this.waitingHead).filter((ticket) => this.requests.slotOf(ticket) >= 0);
    this.waitingHead = 0;
  }

  private completeDue(): void {
    this.armedAt = Infinity;
    const completions = this.completions;
    const now = this.clock.now();
    while (completions.size > 0 && completions.topDueAt() <= now + DUE_TOLERANCE_MS) {
      if (this.unwarmedIn === 0) this.warmAhead();
      this.unwarmedIn--;
      const slot = this.slotInThread(completions.topSequence());
      completions.pop();
      if (slot >= 0) this.complete(slot);
    }
    while (completions.size > 0 && this.slotInThread(completions.topSequence()) < 0) completions.pop();
    // arm reads the time again: on a real clock the answers above took some.
    if (completions.size > 0 && !this.stopped) this.arm(completions.topDueAt());
  }

  /** The slot of `ticket` while its request is in a thread; -1 once it has left (completed, cancelled, lost in a crash). */
  private slotInThread(ticket: number): number {
    const slot = this.requests.slotOf(ticket);
    return slot >= 0 && (this.requests.flags[slot]! & IN_THREAD) !== 0 ? slot : -1;
  }

  /** Whether the client of the request in `slot` has gone away. */
  protected isAbandoned(slot: number): boolean {
    return (this.requests.flags[slot]! & ABANDONED) !== 0;
  }

  /** The request in `slot` leaves its thread; `failure` (UpstreamPool's) answers it so instead of serving it, uncounted here. */
  protected complete(slot: number, failure?: Completion): void {
    const now = this.clock.now();
    const requests = this.requests;
    const abandoned = (requests.flags[slot]! & ABANDONED) !== 0;
    const callback = requests.callbacks[slot];
    const context = requests.contexts[slot];
    const inServer = now - requests.arrivedAt[slot]!;
    // Let go of it before anything else runs: a client's answer may admit its next request, which may move every slot.
    requests.remove(slot);
    this.busy--;
    this.noteTimeInServer(inServer);
    const expired = this.fillThreads();
    if (!abandoned && failure !== undefined) callback?.(context, failure);
    else this.answer(abandoned, callback, context);
    answerExpired(expired);
  }

  /**
   * Reads the clients of the next requests to complete, a batch at a time: independent loads,
   * which the processor fetches from memory in parallel, rather than one cache miss per
   * completion when its answer first touches its client (a million simulated users do not fit
   * in the cache). As the ring's models do (TicketRingServer); here the batch is the completions' next entries.
   */
  private warmAhead(): void {
    const requests = this.requests;
    let seen = 0;
    for (let offset = 0; offset < WARM_AHEAD; offset++) {
      const ticket = this.completions.ringSequenceAhead(offset);
      if (ticket === undefined) break;
      const slot = requests.slotOf(ticket);
      if (slot >= 0) seen += warmOwner(requests.contexts[slot] as WarmableOwner | undefined);
    }
    this.warmed += seen;
    this.unwarmedIn = WARM_AHEAD;
  }
}

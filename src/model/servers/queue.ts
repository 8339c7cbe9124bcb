import type { Random } from "../../backoff/random.ts";
import { CallbackTimer, type Clock, type WarmableOwner, warmOwner } from "../../clock/clock.ts";
import { EventFifoHeap } from "../../clock/event-fifo-heap.ts";
import type { ServerModelFigures } from "./figures.ts";
import { TicketTable } from "./ticket-table.ts";
import type { Completion, OutOfMemoryEvent, ServerModel, ServiceSnapshot, ServiceTicket } from "./server-model.ts";
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
 * ServiceQueue.
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

export interface ThreadPoolOptions extends ThreadPoolShape {
  readonly cancelOnDisconnect: boolean;
  /** Answers this share of the requests served as errors, as ServiceQueue does. */
  readonly errorInjection?: { readonly rate: number; readonly random: Random } | undefined;
  /** Requests in the server (waiting or in a thread) its memory holds. Infinity if omitted. */
  readonly maxInService?: number;
  /** Draws the service times (not read for constant ones). */
  readonly random: Random;
}

/**
 * Requests per second the pool serves flat out (threads ÷ mean service time), and, for a
 * fifo queue, its tipping point: the requests in the server at which a new one's expected
 * time in it (the rounds it waits plus its own service) reaches the client timeout; from
 * there on, without cancel-on-disconnect, the pool serves mostly requests nobody waits for.
 * A lifo queue serves the newest first, and a queue too short to reach that point sheds
 * first: neither has one. The verdict calls the pool over its tipping point while more
 * wait than one request per thread (at most the queue limit less one).
 */
export function queueFigures(shape: ThreadPoolShape, timeoutMs: number): ServerModelFigures {
  const { threads, serviceTimeMs } = shape;
  const capacityPerSec = threads / (serviceTimeMs / 1000);
  let tipping: number | undefined =
    serviceTimeMs >= timeoutMs ? 0 : Math.ceil(threads - 1 + ((timeoutMs - serviceTimeMs) * threads) / serviceTimeMs);
  if (shape.queueOrder === "lifo" || (tipping !== undefined && tipping > threads + shape.queueLimit)) tipping = undefined;
  const toleratedQueue = Math.min(threads, shape.queueLimit - 1);
  return { capacityPerSec, capacityAtConcurrency: threads, tippingConcurrency: tipping, overloadAbove: threads + toleratedQueue };
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

const QUEUED = 0;
const IN_THREAD = 1;
/** Cancelled, expired or completed: gone from the server. */
const GONE = 2;

/**
 * A request in the pool (exported for UpstreamPool, which extends ThreadPool). A new job or
 * a spare one (see ThreadPool.spareJobs) becomes a request by `assign`.
 */
export class Job {
  state = QUEUED;
  /** The client went away (without cancel-on-disconnect the request stays). */
  abandoned = false;
  callback: ((context: unknown, completion: Completion) => void) | undefined;
  context: unknown;
  ticket!: number;
  arrivedAt!: number;
  deadlineAt!: number;

  /** Makes this job the request of `ticket`, whatever it held before. */
  assign(ticket: number, arrivedAt: number, callback: Job["callback"], context: unknown, deadlineAt: number): void {
    this.state = QUEUED;
    this.abandoned = false;
    this.ticket = ticket;
    this.arrivedAt = arrivedAt;
    this.callback = callback;
    this.context = context;
    this.deadlineAt = deadlineAt;
  }
}

/** Two completions closer than a nanosecond are due together. */
const DUE_TOLERANCE_MS = 1e-6;
/** Cancelled requests left in the queue's array before it is compacted (at least as many as wait). */
const COMPACT_AFTER = 1024;
/** Completions whose clients warmAhead reads at once. */
const WARM_AHEAD = 32;

function answerExpired(expired: readonly Job[] | undefined): void {
  if (expired !== undefined) for (const job of expired) job.callback?.(job.context, "expired");
}

export class ThreadPool implements ServerModel {
  protected readonly clock: Clock;
  protected readonly options: ThreadPoolOptions;
  private readonly maxInService: number;
  private threads: number;
  private serviceTimeFactor = 1;
  /** The share answered as errors while an errors fault is on; undefined otherwise. */
  private errorRateOverride: number | undefined = undefined;
  private readonly jobs = new TicketTable<Job>();
  /** Waiting requests in arrival order, from `waitingHead`; cancelled ones are skipped when reached. */
  private waiting: Job[] = [];
  private waitingHead = 0;
  private queued = 0;
  private busy = 0;
  /** Completions of the requests in threads, earliest first, keyed (due, ticket); in order with constant service times. */
  private readonly completions = new EventFifoHeap<Job>();
  /**
   * Jobs of completed requests, for the next requests to reuse: a fresh object per request
   * is memory the processor has not seen lately, a cache miss to write it (about 8 % of a
   * 10⁵-client simulation); these few hundred stay in cache. Only a job nothing else holds
   * comes here (see complete).
   */
  private readonly spareJobs: Job[] = [];
  /** Completions left before warmAhead reads the next batch; `warmed` keeps what was read alive. */
  private unwarmedIn = 0;
  private warmed = 0;
  private readonly timer = new CallbackTimer(() => this.completeDue());
  private armedAt = Infinity;
  private nextTicket = 0;
  private lastDelay = 0;
  private peak = 0;
  private peakDelay = 0;
  private mostStored = 0;
  private admittedTotal = 0;
  private servedTotal = 0;
  private abandonedTotal = 0;
  private abandonedInService = 0;
  private cancelledTotal = 0;
  private shedTotal = 0;
  private expiredTotal = 0;
  private errorsInjectedTotal = 0;
  private outOfMemoryEvent: OutOfMemoryEvent | undefined = undefined;
  private stopped = false;

  constructor(clock: Clock, options: ThreadPoolOptions) {
    this.clock = clock;
    this.options = options;
    this.threads = options.threads;
    this.maxInService = options.maxInService ?? Infinity;
  }

  /** Requests in the server: in a thread or waiting. */
  get concurrency(): number {
    return this.busy + this.queued;
  }

  /** Time in the server (waiting and service) of the request that completed last, ms; 0 before any. */
  get lastDelayMs(): number {
    return this.lastDelay;
  }

  get queueLength(): number {
    return this.queued;
  }

  get threadsBusy(): number {
    return this.busy;
  }

  get storedRequests(): number {
    return this.jobs.size;
  }

  get mostStoredRequests(): number {
    return this.mostStored;
  }

  /** The pool stores every request it holds. */
  get countedRequests(): number {
    return 0;
  }

  get outOfMemory(): OutOfMemoryEvent | undefined {
    return this.outOfMemoryEvent;
  }

  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (this.outOfMemoryEvent !== undefined || this.stopped) return undefined;
    if (this.busy >= this.threads && this.queued >= this.options.queueLimit) {
      this.shedTotal++;
      return undefined;
    }
    if (this.busy + this.queued >= this.maxInService) {
      this.outOfMemoryEvent = { atMs: this.clock.now(), inService: this.busy + this.queued };
      this.stop();
      return undefined;
    }
    const ticket = this.nextTicket++;
    const callback = onComplete as Job["callback"];
    const now = this.clock.now();
    const job = this.spareJobs.pop() ?? new Job();
    job.assign(ticket, now, callback, context, deadlineAt ?? Infinity);
    this.jobs.add(job);
    this.admittedTotal++;
    if (this.busy < this.threads) this.startService(job, now);
    else {
      this.waiting.push(job);
      this.queued++;
    }
    // Every request held is waiting or in a thread (the table holds the same ones): no Map's size to read.
    const held = this.busy + this.queued;
    if (held > this.peak) this.peak = held;
    if (held > this.mostStored) this.mostStored = held;
    return ticket;
  }

  expireOnArrival(deadlineAt: number): boolean {
    if (deadlineAt > this.clock.now()) return false;
    this.expiredTotal++;
    return true;
  }

  /** The client of `ticket` went away: the request stays (abandoned), or with cancelOnDisconnect leaves the queue or its thread. */
  abandon(ticket: ServiceTicket): void {
    const job = this.jobs.get(ticket);
    if (job === undefined || job.abandoned) return;
    job.callback = undefined;
    job.context = undefined;
    if (!this.options.cancelOnDisconnect) {
      job.abandoned = true;
      this.abandonedInService++;
      return;
    }
    this.jobs.delete(ticket);
    this.cancelledTotal++;
    if (job.state === QUEUED) {
      job.state = GONE;
      this.queued--;
      this.compactWaiting();
      return;
    }
    // Its completion stays in the heap and is skipped when it comes up.
    job.state = GONE;
    this.busy--;
    answerExpired(this.fillThreads());
  }

  snapshot(): ServiceSnapshot {
    return {
      concurrency: this.busy + this.queued,
      lastDelayMs: this.lastDelay,
      peakConcurrency: this.peak,
      peakDelayMs: this.peakDelay,
      admitted: this.admittedTotal,
      served: this.servedTotal,
      abandoned: this.abandonedTotal,
      abandonedInService: this.abandonedInService,
      cancelled: this.cancelledTotal,
      shed: this.shedTotal,
      expired: this.expiredTotal,
      errorsInjected: this.errorsInjectedTotal,
      queueLength: this.queued,
      threadsBusy: this.busy,
      threads: this.threads,
    };
  }

  resetPeak(): void {
    this.peak = this.busy + this.queued;
    this.peakDelay = 0;
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
    for (const job of this.jobs.values()) {
      if (!job.abandoned && job.callback !== undefined) lost.push(job.context);
      job.state = GONE;
    }
    this.jobs.clear();
    this.waiting = [];
    this.waitingHead = 0;
    this.queued = 0;
    this.busy = 0;
    this.abandonedInService = 0;
    this.completions.clear();
    this.spareJobs.length = 0;
    this.clock.cancel(this.timer);
    this.armedAt = Infinity;
    return lost;
  }

  private startService(job: Job, now: number): void {
    job.state = IN_THREAD;
    this.busy++;
    this.beginService(job, now);
  }

  /** A request has its thread: its service time starts (UpstreamPool first makes its upstream call). */
  protected beginService(job: Job, now: number): void {
    const options = this.options;
    const meanMs = options.serviceTimeMs * this.serviceTimeFactor;
    const dueAt = now + (options.serviceDist === "constant" ? meanMs : drawServiceTimeMs(options, meanMs, options.random));
    this.completions.push(dueAt, job.ticket, job);
    if (dueAt < this.armedAt) this.arm(dueAt, now);
  }

  private arm(dueAt: number, now: number): void {
    this.armedAt = dueAt;
    this.clock.arm(this.timer, dueAt - now);
  }

  /**
   * Takes waiting requests into free threads, in the queue's order. Returns those dropped at
   * their deadline, for the caller to answer once the threads are taken (so that a client
   * retrying at once cannot jump the queue) and after any answer of its own.
   */
  private fillThreads(): Job[] | undefined {
    let expired: Job[] | undefined;
    const now = this.clock.now();
    while (this.busy < this.threads && this.queued > 0) {
      const job = this.takeWaiting();
      this.queued--;
      if (job.deadlineAt <= now) {
        job.state = GONE;
        this.jobs.delete(job.ticket);
        this.expiredTotal++;
        if (job.abandoned) this.abandonedInService--;
        else (expired ??= []).push(job);
        continue;
      }
      this.startService(job, now);
    }
    return expired;
  }

  /** The next waiting request in the queue's order (one is waiting). */
  private takeWaiting(): Job {
    if (this.options.queueOrder === "lifo") {
      const waiting = this.waiting;
      for (;;) {
        const job = waiting.pop()!;
        if (job.state === QUEUED) return job;
      }
    }
    for (;;) {
      // Read this.waiting afresh each time: trimming it below replaces the array.
      const job = this.waiting[this.waitingHead]!;
      this.waitingHead++;
      if (this.waitingHead > COMPACT_AFTER && this.waitingHead * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.waitingHead);
        this.waitingHead = 0;
      }
      if (job.state === QUEUED) return job;
    }
  }

  /** Drops cancelled requests from the queue's array once they outnumber those waiting. */
  private compactWaiting(): void {
    const dead = this.waiting.length - this.waitingHead - this.queued;
    if (dead <= COMPACT_AFTER || dead <= this.queued) return;
    this.waiting = this.waiting.slice(this.waitingHead).filter((job) => job.state === QUEUED);
    this.waitingHead = 0;
  }

  private completeDue(): void {
    this.armedAt = Infinity;
    const completions = this.completions;
    const now = this.clock.now();
    while (completions.size > 0 && completions.topDueAt() <= now + DUE_TOLERANCE_MS) {
      if (this.unwarmedIn === 0) this.warmAhead();
      this.unwarmedIn--;
      const job = completions.topItem()!;
      completions.pop();
      if (job.state === IN_THREAD) this.complete(job, now);
    }
    while (completions.size > 0 && completions.topItem()!.state !== IN_THREAD) completions.pop();
    // Read the time again: on a real clock the answers above took some.
    if (completions.size > 0 && !this.stopped) this.arm(completions.topDueAt(), this.clock.now());
  }

  /** A request leaves its thread; `failure` (UpstreamPool's) answers it so instead of serving it, uncounted here. */
  protected complete(job: Job, now: number, failure?: Completion): void {
    job.state = GONE;
    this.busy--;
    this.jobs.delete(job.ticket);
    const inServer = now - job.arrivedAt;
    this.lastDelay = inServer;
    if (inServer > this.peakDelay) this.peakDelay = inServer;
    const expired = this.fillThreads();
    if (job.abandoned) {
      this.abandonedTotal++;
      this.abandonedInService--;
    } else if (failure !== undefined) {
      job.callback?.(job.context, failure);
    } else {
      this.servedTotal++;
      const completion = this.injectError() ? "injected-error" : "served";
      job.callback?.(job.context, completion);
    }
    answerExpired(expired);
    // Nothing holds it now: taken out of the completions (or failed in its call: never in them),
    // the table and the queue. Its fields are cleared so that it keeps no client alive.
    job.callback = undefined;
    job.context = undefined;
    this.spareJobs.push(job);
  }

  /**
   * Reads the clients of the next requests to complete, a batch at a time: independent loads,
   * which the processor fetches from memory in parallel, rather than one cache miss per
   * completion when its answer first touches its client (a million simulated users do not fit
   * in the cache). As ServiceQueue does; here the batch is the completions' next entries.
   */
  private warmAhead(): void {
    let seen = 0;
    for (let offset = 0; offset < WARM_AHEAD; offset++) {
      const job = this.completions.ringItemAhead(offset);
      if (job === undefined) break;
      seen += warmOwner(job.context as WarmableOwner | undefined);
    }
    this.warmed += seen;
    this.unwarmedIn = WARM_AHEAD;
  }

  private injectError(): boolean {
    const injection = this.options.errorInjection;
    if (injection === undefined) return false;
    const rate = this.errorRateOverride ?? injection.rate;
    if (rate <= 0 || !(injection.random.uniform() < rate)) return false;
    this.errorsInjectedTotal++;
    return true;
  }
}

import { CallbackTimer, type Clock, type WarmableOwner, warmOwner } from "../clock/clock.ts";
import { EventFifoHeap } from "../clock/event-fifo-heap.ts";
import { drawsInjectedError, type ErrorInjection } from "./servers/error-injection.ts";
import type { Completion, OutOfMemoryEvent, ServerModel, ServiceSnapshot, ServiceTicket } from "./servers/server-model.ts";
import { moveTickets } from "./servers/ticket-ring.ts";
import type { FaultConditions } from "./faults/conditions.ts";
import type { SharedDelay } from "./servers/kind.ts";

// The types every server model shares, from where they were first defined.
export type { Completion, OutOfMemoryEvent, ServiceSnapshot, ServiceTicket } from "./servers/server-model.ts";

/**
 * Requests in service on the modelled server, in virtual or real time.
 *
 * Every request in service shares one delay, delay(c) for the current concurrency c, and
 * completes at the first instant its age reaches that delay (re-evaluated as c changes,
 * as the reference server does by polling every 50 ms). Because all share one delay, the
 * oldest always finishes first: a FIFO queue and a single timer for its head are exact.
 * Arrivals only push (c rising can only postpone the head, so an armed timer that fires
 * early just re-checks); completions and cancellations release the head at once.
 *
 * Memory stays bounded in two ways:
 * - Exactly, by counting: without cancel-on-disconnect, c can only fall when the head
 *   completes. Once the head cannot complete before the horizon (its delay is infinite,
 *   or ends after the simulator's last instant), c only rises until then, the head's
 *   delay only grows, and no request in service can complete before the horizon. From
 *   then on requests in service are counted, not stored; nothing else changes.
 * - By a modelled limit, `maxInService`: the requests a server's memory holds. A Node
 *   server keeps each request in service, answered or abandoned, in about 4.8 KB of heap
 *   (measured: 120 000 abandoned requests in service took 478 MB more RSS), so its default
 *   heap of about 4 GB runs out near 800 000; V8 then aborts the process ("JavaScript heap
 *   out of memory"). At the limit the model runs out of memory the same way: `admit`
 *   refuses, `outOfMemory` says when, and the shell stops (the server exits, the
 *   simulation ends). Descriptors are no such limit: a client that gives up closes its
 *   connection, and the abandoned request holds no socket while it stays in service.
 */
export interface ServiceQueueOptions {
  /** delay(c), bound to its model's curve (the exponential model, the default, or the linear one). */
  readonly delay: SharedDelay;
  /** Drop a request from service when its client goes away. Defaults to false, as in the reference. */
  readonly cancelOnDisconnect: boolean;
  /** Answer 503 at once above this many requests in service. Defaults to Infinity (off). */
  readonly maxConcurrency: number;
  /**
   * Transient faults: each request that completes with its client still waiting is answered
   * as an error with probability `rate`, drawn from `random` (the everyday failures that
   * retries exist for). Off when undefined.
   */
  readonly errorInjection?: ErrorInjection | undefined;
  /** Requests in service the server's memory holds; one more and it runs out of memory. Infinity if omitted. */
  readonly maxInService?: number;
  /**
   * The last instant anyone looks at (the simulator's end of run): requests that cannot
   * complete by then are counted, not stored. Infinity if omitted (a real server): then
   * only once the delay is infinite. After the horizon, counted requests never complete.
   */
  readonly horizonMs?: number;
}

/** The default memory limit: about what a Node server's default 4 GB heap holds (see above). */
export const DEFAULT_MAX_IN_SERVICE = 800_000;

/** A slot's state: in service, possibly abandoned by its client, or cancelled. */
const IN_SERVICE = 0;
const ABANDONED = 1;
const CANCELLED = 2;

type CompletionCallback = (context: unknown, completion: Completion) => void;

/** Two requests whose ages differ by less than a nanosecond complete together. */
const DUE_TOLERANCE_MS = 1e-6;

const INITIAL_CAPACITY = 1024;
/** Requests whose contexts warmAhead reads at once. */
const WARM_AHEAD = 32;

export class ServiceQueue implements ServerModel {
  // The requests in service, oldest first, in a ring buffer of parallel arrays indexed by
  // ticket number modulo the capacity (a power of two): tickets [head, tail) are in it.
  private arrivals = new Float64Array(INITIAL_CAPACITY);
  private states = new Uint8Array(INITIAL_CAPACITY);
  private callbacks: (CompletionCallback | undefined)[] = new Array<CompletionCallback | undefined>(INITIAL_CAPACITY).fill(undefined);
  private contexts: unknown[] = new Array<unknown>(INITIAL_CAPACITY).fill(undefined);
  private headTicket = 0;
  private tailTicket = 0;
  private inService = 0;
  /** One timer for the head, re-armed for each new head rather than made anew. */
  private readonly timer = new CallbackTimer(() => this.headDue());
  private timerArmed = false;
  /** When the armed timer fires: never after the head is due. */
  private armedDueAt = 0;
  private lastDelay = 0;
  /** delay(c) for the concurrency it was last computed for (pow is costly; c often repeats). */
  private delayConcurrency = -1;
  private delayForConcurrency = 0;
  private peak = 0;
  /** Tickets below this have had their contexts read ahead (warmAhead); `warmed` keeps what was read alive. */
  private warmedTo = 0;
  private warmed = 0;
  private admittedTotal = 0;
  private servedTotal = 0;
  private abandonedTotal = 0;
  /** Requests in service whose client has gone (abandoned, not yet completed). */
  private abandonedInService = 0;
  private cancelledTotal = 0;
  private shedTotal = 0;
  private expiredTotal = 0;
  private errorsInjectedTotal = 0;
  /**
   * Deadlines of requests in service, earliest first, keyed (deadline, ticket); made at the
   * first request that brings one. Entries of requests that have left service stay until
   * they come up, and are skipped then.
   */
  private deadlines: EventFifoHeap | undefined = undefined;
  private readonly deadlineTimer = new CallbackTimer(() => this.deadlineDue());
  /** Requests in service that are counted, not stored: none of them completes before the horizon. */
  private countedTotal = 0;
  private mostStored = 0;
  /** Set once no request in service can complete before the horizon; then nothing is stored. */
  private beyondHorizon = false;
  private outOfMemoryEvent: OutOfMemoryEvent | undefined = undefined;
  /** The first ticket counted rather than stored (see passHorizon). */
  private countedFromTicket = Infinity;

  private readonly clock: Clock;
  private readonly options: ServiceQueueOptions;
  private readonly maxInService: number;
  private readonly horizonMs: number;
  /** delay(c) now: the options' curve, or that curve under a fault (setFaultConditions). */
  private curve: SharedDelay;
  /** The share answered as errors while an errors fault is on; undefined otherwise. */
  private errorRateOverride: number | undefined = undefined;

  constructor(clock: Clock, options: ServiceQueueOptions) {
    this.clock = clock;
    this.options = options;
    this.curve = options.delay;
    this.maxInService = options.maxInService ?? Infinity;
    this.horizonMs = options.horizonMs ?? Infinity;
  }

  get concurrency(): number {
    return this.inService;
  }

  /** The delay most recently evaluated for a request in service, in ms; 0 before any. */
  get lastDelayMs(): number {
    return this.lastDelay;
  }

  /** Requests in service kept one by one (with their arrival time and callback). */
  get storedRequests(): number {
    return this.tailTicket - this.headTicket;
  }

  /** The most requests in service stored at any one time. */
  get mostStoredRequests(): number {
    return this.mostStored;
  }

  /** Requests in service only counted: they cannot complete before the horizon. */
  get countedRequests(): number {
    return this.countedTotal;
  }

  /** When the server ran out of memory; undefined while it has not. After it, `admit` takes nothing. */
  get outOfMemory(): OutOfMemoryEvent | undefined {
    return this.outOfMemoryEvent;
  }

  /**
   * Takes a request into service, or sheds it when load shedding is on and the server is
   * full, or runs out of memory (see `outOfMemory`); undefined for both. `onComplete` runs
   * when its delay has passed (not for a cancelled or abandoned request), with `context`
   * and how it completed as its arguments: a caller admitting many requests passes one
   * function and a context per request rather than a closure per request. With a
   * `deadlineAt` (on this queue's clock) the request is taken out of service at that
   * instant if it is still there, even when it would complete at that very instant, and
   * `onComplete` is told "expired" (unless its client had gone). Callers check a deadline
   * that may already have passed with expireOnArrival first.
   */
  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (this.outOfMemoryEvent !== undefined) return undefined;
    if (this.inService >= this.options.maxConcurrency) {
      this.shedTotal++;
      return undefined;
    }
    if (this.inService >= this.maxInService) {
      this.outOfMemoryEvent = { atMs: this.clock.now(), inService: this.inService };
      this.stop();
      return undefined;
    }
    if (this.beyondHorizon) return this.count();
    if (this.tailTicket - this.headTicket === this.arrivals.length) this.grow();
    const ticket = this.tailTicket++;
    const slot = ticket & (this.arrivals.length - 1);
    this.arrivals[slot] = this.clock.now();
    this.states[slot] = IN_SERVICE;
    this.callbacks[slot] = onComplete as CompletionCallback | undefined;
    this.contexts[slot] = context;
    this.inService++;
    this.admittedTotal++;
    if (this.inService > this.peak) this.peak = this.inService;
    if (this.tailTicket - this.headTicket > this.mostStored) this.mostStored = this.tailTicket - this.headTicket;
    this.lastDelay = this.currentDelay();
    if (deadlineAt !== undefined) this.addDeadline(deadlineAt, ticket);
    if (!this.timerArmed) this.armForHead();
    else if (this.headStuckPastHorizon(this.lastDelay)) this.passHorizon();
    return ticket;
  }

  /** Admits a request that cannot complete before the horizon: a ticket and a count. */
  private count(): ServiceTicket {
    const ticket = this.tailTicket++;
    this.headTicket = this.tailTicket;
    this.inService++;
    this.countedTotal++;
    this.admittedTotal++;
    if (this.inService > this.peak) this.peak = this.inService;
    this.lastDelay = this.currentDelay();
    return ticket;
  }

  /**
   * Whether the head, at delay `delayMs`, cannot complete by the horizon, so that no
   * request in service can (only without cancel-on-disconnect or deadlines, which lower c).
   * The tolerance errs on the side of storing.
   */
  private headStuckPastHorizon(delayMs: number): boolean {
    // Cancellations and expired deadlines lower c without a completion: then nothing is certain.
    if (this.options.cancelOnDisconnect || this.deadlines !== undefined) return false;
    const dueAt = this.arrivals[this.headTicket & (this.arrivals.length - 1)]! + delayMs - DUE_TOLERANCE_MS;
    return dueAt === Infinity || dueAt > this.horizonMs;
  }

  /**
   * No request in service can complete before the horizon (see the class comment): count
   * them, drop what was stored, and stop the timer.
   */
  private passHorizon(): void {
    this.beyondHorizon = true;
    this.countedFromTicket = this.headTicket;
    this.countedTotal += this.tailTicket - this.headTicket;
    this.headTicket = this.tailTicket;
    this.clock.cancel(this.timer);
    this.timerArmed = false;
    this.arrivals = new Float64Array(INITIAL_CAPACITY);
    this.states = new Uint8Array(INITIAL_CAPACITY);
    this.callbacks = new Array<CompletionCallback | undefined>(INITIAL_CAPACITY).fill(undefined);
    this.contexts = new Array<unknown>(INITIAL_CAPACITY).fill(undefined);
  }

  /**
   * For a request that brings a deadline: true, and the request is counted as expired, when
   * that deadline (on this queue's clock) has already passed, as for a request that waited
   * in the accept queue longer than its client would wait. The caller then answers it
   * without taking it into service.
   */
  expireOnArrival(deadlineAt: number): boolean {
    if (deadlineAt > this.clock.now()) return false;
    this.expiredTotal++;
    return true;
  }

  /**
   * The client of `ticket` went away. By default the request stays in service and holds
   * its slot until its delay has passed, which is what makes the failure metastable.
   */
  abandon(ticket: ServiceTicket): void {
    // A counted request stays in service to the horizon; it is abandoned once, by its one client.
    if (this.beyondHorizon && ticket >= this.countedFromTicket && ticket < this.tailTicket) {
      this.abandonedInService++;
      return;
    }
    // Tickets before the head have completed or been cancelled already.
    if (ticket < this.headTicket || ticket >= this.tailTicket) return;
    const slot = ticket & (this.arrivals.length - 1);
    if (this.states[slot] !== IN_SERVICE) return;
    this.states[slot] = ABANDONED;
    // Its callback will not run: let go of what it holds (a real server's response, request and socket).
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    if (!this.options.cancelOnDisconnect) {
      this.abandonedInService++;
      return;
    }
    this.states[slot] = CANCELLED;
    this.inService--;
    this.cancelledTotal++;
    this.rearm();
  }

  snapshot(): ServiceSnapshot {
    return {
      concurrency: this.inService,
      lastDelayMs: this.lastDelay,
      peakConcurrency: this.peak,
      peakDelayMs: this.curve.delayMs(this.peak),
      admitted: this.admittedTotal,
      served: this.servedTotal,
      abandoned: this.abandonedTotal,
      abandonedInService: this.abandonedInService,
      cancelled: this.cancelledTotal,
      shed: this.shedTotal,
      expired: this.expiredTotal,
      errorsInjected: this.errorsInjectedTotal,
    };
  }

  /** Resets the peak so a reporter can show the peak of each interval. */
  resetPeak(): void {
    this.peak = this.inService;
  }

  /** Stops the timer; requests still in service never complete. */
  stop(): void {
    this.clock.cancel(this.timer);
    this.clock.cancel(this.deadlineTimer);
    this.timerArmed = false;
  }

  /**
   * Works under a fault from now on: the delay of every request in service follows the
   * changed curve at once (a completion it brings forward happens now), and errors fault
   * shares replace the injection rate (they need `errorInjection` for its random source).
   * Callers that change the curve keep the horizon off: counting assumes a delay that only grows.
   */
  setFaultConditions(conditions: FaultConditions): void {
    this.curve = this.options.delay.under(conditions);
    this.errorRateOverride = conditions.errorRate;
    this.delayConcurrency = -1;
    if (this.inService > 0 && !this.beyondHorizon) this.rearm();
  }

  /**
   * The server dies: every request in it is lost and its timers stop; the contexts of those
   * whose clients still wait come back, for the caller to reset their connections. Totals stay.
   */
  crash(): unknown[] {
    const lost: unknown[] = [];
    const mask = this.arrivals.length - 1;
    for (let ticket = this.headTicket; ticket < this.tailTicket; ticket++) {
      const slot = ticket & mask;
      if (this.states[slot] === IN_SERVICE && this.callbacks[slot] !== undefined) lost.push(this.contexts[slot]);
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
    }
    this.headTicket = this.tailTicket;
    this.inService = 0;
    this.abandonedInService = 0;
    this.countedTotal = 0;
    this.beyondHorizon = false;
    this.countedFromTicket = Infinity;
    this.deadlines = undefined;
    this.delayConcurrency = -1;
    this.stop();
    return lost;
  }

  /** delay(c) for the current concurrency c. */
  private currentDelay(): number {
    if (this.inService !== this.delayConcurrency) {
      this.delayConcurrency = this.inService;
      this.delayForConcurrency = this.curve.delayMs(this.inService);
    }
    return this.delayForConcurrency;
  }

  /** Skips cancelled requests at the head; false when none is in service. */
  private findHead(): boolean {
    const mask = this.arrivals.length - 1;
    while (this.headTicket < this.tailTicket && this.states[this.headTicket & mask] === CANCELLED) this.headTicket++;
    return this.headTicket < this.tailTicket;
  }

  /** After a cancellation: completes what is due now, and arms for the head if it is due sooner than armed. */
  private rearm(): void {
    this.releaseDue();
    this.armForHead();
  }

  /**
   * Arms the timer for the head's completion. The armed time never comes after it (an
   * early firing just re-checks), so a timer armed for an earlier time is kept: every
   * re-arming leaves a stale entry in the clock until its time, and a cancellation often
   * moves the head's completion later (the head itself cancelled, or a flat delay). A
   * completion after the horizon is not armed at all: it would never fire.
   */
  private armForHead(): void {
    if (!this.findHead()) {
      this.disarm();
      return;
    }
    const delay = this.currentDelay();
    this.lastDelay = delay;
    if (this.headStuckPastHorizon(delay)) {
      this.passHorizon();
      return;
    }
    const dueAt = this.arrivals[this.headTicket & (this.arrivals.length - 1)]! + delay;
    if (this.timerArmed && dueAt >= this.armedDueAt) return;
    if (dueAt - DUE_TOLERANCE_MS > this.horizonMs) {
      this.disarm();
      return;
    }
    this.clock.arm(this.timer, dueAt - this.clock.now());
    this.timerArmed = true;
    this.armedDueAt = dueAt;
  }

  private disarm(): void {
    if (!this.timerArmed) return;
    this.clock.cancel(this.timer);
    this.timerArmed = false;
  }

  private headDue(): void {
    this.timerArmed = false;
    this.releaseDue();
    this.armForHead();
  }

  /** Completes, oldest first, every request whose age has reached delay(c) at this instant. */
  private releaseDue(): void {
    const now = this.clock.now();
    // A deadline that has come wins over a completion due at the same instant.
    if (this.deadlines !== undefined) this.expireDue(now);
    for (;;) {
      if (!this.findHead()) return;
      const delay = this.currentDelay();
      this.lastDelay = delay;
      const slot = this.headTicket & (this.arrivals.length - 1);
      if (now - this.arrivals[slot]! < delay - DUE_TOLERANCE_MS) return;
      if (this.headTicket >= this.warmedTo) this.warmAhead();
      this.headTicket++;
      this.inService--;
      const callback = this.callbacks[slot];
      const context = this.contexts[slot];
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
      if (this.states[slot] === ABANDONED) {
        this.abandonedTotal++;
        this.abandonedInService--;
      } else {
        this.servedTotal++;
        const completion = this.injectError() ? "injected-error" : "served";
        callback?.(context, completion);
      }
    }
  }

  /**
   * Reads the contexts of the next requests to complete, one batch at a time: independent
   * loads, which the processor fetches from memory in parallel, rather than one cache miss
   * per completion when the callback first touches its context (a million simulated users
   * do not fit in the cache). The value read is kept only so that the loads stay.
   */
  private warmAhead(): void {
    const mask = this.arrivals.length - 1;
    const end = Math.min(this.tailTicket, this.headTicket + WARM_AHEAD);
    let seen = 0;
    for (let ticket = this.headTicket; ticket < end; ticket++) {
      seen += warmOwner(this.contexts[ticket & mask] as WarmableOwner | undefined);
    }
    this.warmed += seen;
    this.warmedTo = end;
  }

  /** Whether this answer is an injected error; draws only when injection is on. */
  private injectError(): boolean {
    if (!drawsInjectedError(this.options.errorInjection, this.errorRateOverride)) return false;
    this.errorsInjectedTotal++;
    return true;
  }

  private addDeadline(deadlineAt: number, ticket: ServiceTicket): void {
    this.deadlines ??= new EventFifoHeap();
    const earliest = this.deadlines.size === 0 ? Infinity : this.deadlines.topDueAt();
    // Tickets are unique and rise with arrival: equal deadlines expire oldest first.
    this.deadlines.push(deadlineAt, ticket);
    if (deadlineAt < earliest) this.clock.arm(this.deadlineTimer, deadlineAt - this.clock.now());
  }

  private deadlineDue(): void {
    // releaseDue expires what is due first, then completes what the lower concurrency lets go.
    this.rearm();
    this.armForDeadline();
  }

  /** Arms the deadline timer for the earliest deadline of a request still in service. */
  private armForDeadline(): void {
    const deadlines = this.deadlines!;
    const mask = this.arrivals.length - 1;
    // Most requests complete before their deadline: drop their entries now rather than wake for them.
    while (deadlines.size > 0) {
      const ticket = deadlines.topSequence();
      if (ticket >= this.headTicket && this.states[ticket & mask] !== CANCELLED) break;
      deadlines.pop();
    }
    if (deadlines.size > 0) this.clock.arm(this.deadlineTimer, deadlines.topDueAt() - this.clock.now());
  }

  /** Takes every request whose deadline is at or before `now` out of service. */
  private expireDue(now: number): void {
    const deadlines = this.deadlines!;
    const mask = this.arrivals.length - 1;
    while (deadlines.size > 0 && deadlines.topDueAt() <= now) {
      const ticket = deadlines.topSequence();
      deadlines.pop();
      // Tickets before the head have left service already.
      if (ticket < this.headTicket) continue;
      const slot = ticket & mask;
      const state = this.states[slot];
      if (state === CANCELLED) continue;
      const callback = this.callbacks[slot];
      const context = this.contexts[slot];
      this.states[slot] = CANCELLED;
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
      this.inService--;
      this.expiredTotal++;
      if (state === IN_SERVICE) callback?.(context, "expired");
      else this.abandonedInService--;
    }
  }

  private grow(): void {
    const size = this.arrivals.length * 2;
    const { headTicket: head, tailTicket: tail } = this;
    this.arrivals = moveTickets(this.arrivals, new Float64Array(size), head, tail);
    this.states = moveTickets(this.states, new Uint8Array(size), head, tail);
    this.callbacks = moveTickets(this.callbacks, new Array<CompletionCallback | undefined>(size).fill(undefined), head, tail);
    this.contexts = moveTickets(this.contexts, new Array<unknown>(size).fill(undefined), head, tail);
  }
}

import type { Random } from "../backoff/random.ts";
import { CallbackTimer, type Clock } from "../clock/clock.ts";
import { EventHeap } from "../clock/event-heap.ts";
import { type LatencyModel, modelledDelayMs } from "./latency.ts";

/**
 * Requests in service on the modelled server, in virtual or real time.
 *
 * Every request in service shares one delay, delay(c) for the current concurrency c, and
 * completes at the first instant its age reaches that delay (re-evaluated as c changes,
 * as the reference server does by polling every 50 ms). Because all share one delay, the
 * oldest always finishes first: a FIFO queue and a single timer for its head are exact.
 * Arrivals only push (c rising can only postpone the head, so an armed timer that fires
 * early just re-checks); completions and cancellations release the head at once.
 */
export interface ServiceQueueOptions {
  readonly latency: LatencyModel;
  /** Drop a request from service when its client goes away. Defaults to false, as in the reference. */
  readonly cancelOnDisconnect: boolean;
  /** Answer 503 at once above this many requests in service. Defaults to Infinity (off). */
  readonly maxConcurrency: number;
  /**
   * Transient faults: each request that completes with its client still waiting is answered
   * as an error with probability `rate`, drawn from `random` (the everyday failures that
   * retries exist for). Off when undefined.
   */
  readonly errorInjection?: { readonly rate: number; readonly random: Random } | undefined;
}

/**
 * How a request left service, as its completion callback is told: answered, answered with
 * an injected error, or taken out at its deadline (see admit's `deadlineAt`).
 */
export type Completion = "served" | "injected-error" | "expired";

/**
 * A request taken into service: its number in the order of arrival. Numbers, not objects,
 * so that admitting a request allocates nothing.
 */
export type ServiceTicket = number;

/** A slot's state: in service, possibly abandoned by its client, or cancelled. */
const IN_SERVICE = 0;
const ABANDONED = 1;
const CANCELLED = 2;

export interface ServiceSnapshot {
  readonly concurrency: number;
  readonly lastDelayMs: number;
  /** The most requests in service since the last resetPeak(). */
  readonly peakConcurrency: number;
  /** delay(peakConcurrency): the longest delay since the last resetPeak(), in ms. */
  readonly peakDelayMs: number;
  readonly admitted: number;
  /** Completed with the client still waiting. */
  readonly served: number;
  /** Completed after the client had gone away (the work done for nobody). */
  readonly abandoned: number;
  /** In service now for a client that has gone away (without cancelOnDisconnect). */
  readonly abandonedInService: number;
  /** Taken out of service on disconnect (only with cancelOnDisconnect). */
  readonly cancelled: number;
  readonly shed: number;
  /** Taken out of service, or refused on arrival, because the deadline its client sent had passed. */
  readonly expired: number;
  /** Of `served`, those answered with an error by errorInjection. */
  readonly errorsInjected: number;
}

type CompletionCallback = (context: unknown, completion: Completion) => void;

/** Two requests whose ages differ by less than a nanosecond complete together. */
const DUE_TOLERANCE_MS = 1e-6;

export class ServiceQueue {
  // The requests in service, oldest first, in a ring buffer of parallel arrays indexed by
  // ticket number modulo the capacity (a power of two): tickets [head, tail) are in it.
  private arrivals = new Float64Array(1024);
  private states = new Uint8Array(1024);
  private callbacks: (CompletionCallback | undefined)[] = new Array<CompletionCallback | undefined>(1024).fill(undefined);
  private contexts: unknown[] = new Array<unknown>(1024).fill(undefined);
  private headTicket = 0;
  private tailTicket = 0;
  private inService = 0;
  /** One timer for the head, re-armed for each new head rather than made anew. */
  private readonly timer = new CallbackTimer(() => this.headDue());
  private timerArmed = false;
  private lastDelay = 0;
  /** delay(c) for the concurrency it was last computed for (pow is costly; c often repeats). */
  private delayConcurrency = -1;
  private delayForConcurrency = 0;
  private peak = 0;
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
  private deadlines: EventHeap<undefined> | undefined = undefined;
  private readonly deadlineTimer = new CallbackTimer(() => this.deadlineDue());

  private readonly clock: Clock;
  private readonly options: ServiceQueueOptions;

  constructor(clock: Clock, options: ServiceQueueOptions) {
    this.clock = clock;
    this.options = options;
  }

  get concurrency(): number {
    return this.inService;
  }

  /** The delay most recently evaluated for a request in service, in ms; 0 before any. */
  get lastDelayMs(): number {
    return this.lastDelay;
  }

  /**
   * Takes a request into service, or sheds it when load shedding is on and the server is
   * full. `onComplete` runs when its delay has passed (not for a cancelled or abandoned
   * request), with `context` and how it completed as its arguments: a caller admitting
   * many requests passes one function and a context per request rather than a closure per
   * request. With a `deadlineAt` (on this queue's clock) the request is taken out of
   * service at that instant if it is still there, even when it would complete at that
   * very instant, and `onComplete` is told "expired" (unless its client had gone).
   * Callers check a deadline that may already have passed with expireOnArrival first.
   */
  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  admit(onComplete?: (context: never, completion: Completion) => void, context?: unknown, deadlineAt?: number): ServiceTicket | undefined {
    if (this.inService >= this.options.maxConcurrency) {
      this.shedTotal++;
      return undefined;
    }
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
    this.lastDelay = this.currentDelay();
    if (deadlineAt !== undefined) this.addDeadline(deadlineAt, ticket);
    if (!this.timerArmed) this.armForHead();
    return ticket;
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
    // Tickets before the head have completed or been cancelled already.
    if (ticket < this.headTicket || ticket >= this.tailTicket) return;
    const slot = ticket & (this.arrivals.length - 1);
    if (this.states[slot] !== IN_SERVICE) return;
    this.states[slot] = ABANDONED;
    if (!this.options.cancelOnDisconnect) {
      this.abandonedInService++;
      return;
    }
    this.states[slot] = CANCELLED;
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    this.inService--;
    this.cancelledTotal++;
    this.rearm();
  }

  snapshot(): ServiceSnapshot {
    return {
      concurrency: this.inService,
      lastDelayMs: this.lastDelay,
      peakConcurrency: this.peak,
      peakDelayMs: modelledDelayMs(this.options.latency, this.peak),
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

  /** delay(c) for the current concurrency c. */
  private currentDelay(): number {
    if (this.inService !== this.delayConcurrency) {
      this.delayConcurrency = this.inService;
      this.delayForConcurrency = modelledDelayMs(this.options.latency, this.inService);
    }
    return this.delayForConcurrency;
  }

  /** Skips cancelled requests at the head; false when none is in service. */
  private findHead(): boolean {
    const mask = this.arrivals.length - 1;
    while (this.headTicket < this.tailTicket && this.states[this.headTicket & mask] === CANCELLED) this.headTicket++;
    return this.headTicket < this.tailTicket;
  }

  private rearm(): void {
    this.clock.cancel(this.timer);
    this.timerArmed = false;
    this.releaseDue();
    this.armForHead();
  }

  private armForHead(): void {
    if (!this.findHead()) return;
    const delay = this.currentDelay();
    this.lastDelay = delay;
    const remaining = this.arrivals[this.headTicket & (this.arrivals.length - 1)]! + delay - this.clock.now();
    this.clock.arm(this.timer, remaining);
    this.timerArmed = true;
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

  /** Whether this answer is an injected error; draws only when injection is on. */
  private injectError(): boolean {
    const injection = this.options.errorInjection;
    if (injection === undefined || injection.rate <= 0 || !(injection.random.uniform() < injection.rate)) return false;
    this.errorsInjectedTotal++;
    return true;
  }

  private addDeadline(deadlineAt: number, ticket: ServiceTicket): void {
    this.deadlines ??= new EventHeap<undefined>();
    const earliest = this.deadlines.size === 0 ? Infinity : this.deadlines.topDueAt();
    // Tickets are unique and rise with arrival: equal deadlines expire oldest first.
    this.deadlines.push(deadlineAt, ticket, undefined);
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
    const capacity = this.arrivals.length;
    const arrivals = new Float64Array(capacity * 2);
    const states = new Uint8Array(capacity * 2);
    const callbacks = new Array<CompletionCallback | undefined>(capacity * 2).fill(undefined);
    const contexts = new Array<unknown>(capacity * 2).fill(undefined);
    // Tickets keep their numbers: each moves to its slot in the larger ring.
    for (let ticket = this.headTicket; ticket < this.tailTicket; ticket++) {
      const from = ticket & (capacity - 1);
      const to = ticket & (capacity * 2 - 1);
      arrivals[to] = this.arrivals[from]!;
      states[to] = this.states[from]!;
      callbacks[to] = this.callbacks[from];
      contexts[to] = this.contexts[from];
    }
    this.arrivals = arrivals;
    this.states = states;
    this.callbacks = callbacks;
    this.contexts = contexts;
  }
}

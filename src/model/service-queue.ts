import { CallbackTimer, type Clock } from "../clock/clock.ts";
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
}

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
  /** Taken out of service on disconnect (only with cancelOnDisconnect). */
  readonly cancelled: number;
  readonly shed: number;
}

/** Two requests whose ages differ by less than a nanosecond complete together. */
const DUE_TOLERANCE_MS = 1e-6;

export class ServiceQueue {
  // The requests in service, oldest first, in a ring buffer of parallel arrays indexed by
  // ticket number modulo the capacity (a power of two): tickets [head, tail) are in it.
  private arrivals = new Float64Array(1024);
  private states = new Uint8Array(1024);
  private callbacks: (((context: unknown) => void) | undefined)[] = new Array<((context: unknown) => void) | undefined>(1024).fill(
    undefined,
  );
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
  private cancelledTotal = 0;
  private shedTotal = 0;

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
   * request), with `context` as its argument: a caller admitting many requests passes one
   * function and a context per request rather than a closure per request.
   */
  admit(onComplete?: () => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C) => void, context: C): ServiceTicket | undefined;
  admit(onComplete?: (context: unknown) => void, context?: unknown): ServiceTicket | undefined {
    if (this.inService >= this.options.maxConcurrency) {
      this.shedTotal++;
      return undefined;
    }
    if (this.tailTicket - this.headTicket === this.arrivals.length) this.grow();
    const ticket = this.tailTicket++;
    const slot = ticket & (this.arrivals.length - 1);
    this.arrivals[slot] = this.clock.now();
    this.states[slot] = IN_SERVICE;
    this.callbacks[slot] = onComplete;
    this.contexts[slot] = context;
    this.inService++;
    this.admittedTotal++;
    if (this.inService > this.peak) this.peak = this.inService;
    this.lastDelay = this.currentDelay();
    if (!this.timerArmed) this.armForHead();
    return ticket;
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
    // Its callback will not run: let go of what it holds (a real server's response, request and socket).
    this.callbacks[slot] = undefined;
    this.contexts[slot] = undefined;
    if (!this.options.cancelOnDisconnect) return;
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
      peakDelayMs: modelledDelayMs(this.options.latency, this.peak),
      admitted: this.admittedTotal,
      served: this.servedTotal,
      abandoned: this.abandonedTotal,
      cancelled: this.cancelledTotal,
      shed: this.shedTotal,
    };
  }

  /** Resets the peak so a reporter can show the peak of each interval. */
  resetPeak(): void {
    this.peak = this.inService;
  }

  /** Stops the timer; requests still in service never complete. */
  stop(): void {
    this.clock.cancel(this.timer);
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
      } else {
        this.servedTotal++;
        callback?.(context);
      }
    }
  }

  private grow(): void {
    const capacity = this.arrivals.length;
    const arrivals = new Float64Array(capacity * 2);
    const states = new Uint8Array(capacity * 2);
    const callbacks = new Array<((context: unknown) => void) | undefined>(capacity * 2).fill(undefined);
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

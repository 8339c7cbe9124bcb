import { CallbackTimer, type Clock } from "../clock/clock.ts";
import { EventFifoHeap } from "../clock/event-fifo-heap.ts";
import type { BookkeepingOptions } from "./servers/bookkeeping.ts";
import type { Completion, CompletionCallback, ServerModel, ServiceSnapshot, ServiceTicket } from "./servers/server-model.ts";
import { ABANDONED, TicketRingServer, WAITED_FOR } from "./servers/ticket-ring.ts";
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
 * - By a modelled limit, `maxInService`: the requests a server's memory holds
 *   (DEFAULT_MAX_IN_SERVICE, servers/bookkeeping.ts, says why 800 000). At the limit the
 *   model runs out of memory as every model does (ServerBookkeeping's `refuses`).
 */
export interface ServiceQueueOptions extends BookkeepingOptions {
  /** delay(c), bound to its model's curve (the exponential model, the default, or the linear one). */
  readonly delay: SharedDelay;
  /** Drop a request from service when its client goes away. Defaults to false, as in the reference. */
  readonly cancelOnDisconnect: boolean;
  /** Answer 503 at once above this many requests in service. Defaults to Infinity (off). */
  readonly maxConcurrency: number;
  /**
   * The last instant anyone looks at (the simulator's end of run): requests that cannot
   * complete by then are counted, not stored. Infinity if omitted (a real server): then
   * only once the delay is infinite. After the horizon, counted requests never complete.
   */
  readonly horizonMs?: number;
}

/** A slot's state beyond the ring's (its client waits, or has gone): taken out of service, by a cancel or a deadline. */
const CANCELLED = 2;

/** Two requests whose ages differ by less than a nanosecond complete together. */
const DUE_TOLERANCE_MS = 1e-6;

/**
 * The requests in service, oldest first, are the ring's tickets [head, tail) (TicketRingServer);
 * the counters, the memory limit and the answers are ServerBookkeeping's.
 */
export class ServiceQueue extends TicketRingServer implements ServerModel {
  /** Requests in service, stored or only counted (a cancelled one still in the ring is not). */
  private inService = 0;
  /** One timer for the head, re-armed for each new head rather than made anew. */
  private readonly timer = new CallbackTimer(() => this.headDue());
  private timerArmed = false;
  /** When the armed timer fires: never after the head is due. */
  private armedDueAt = 0;
  /** delay(c) for the concurrency it was last computed for (pow is costly; c often repeats). */
  private delayConcurrency = -1;
  private delayForConcurrency = 0;
  /**
   * Deadlines of requests in service, earliest first, keyed (deadline, ticket); made at the
   * first request that brings one. Entries of requests that have left service stay until
   * they come up, and are skipped then.
   */
  private deadlines: EventFifoHeap | undefined = undefined;
  private readonly deadlineTimer = new CallbackTimer(() => this.deadlineDue());
  /** Set once no request in service can complete before the horizon; then nothing is stored. */
  private beyondHorizon = false;
  /** The first ticket counted rather than stored (see passHorizon). */
  private countedFromTicket = Infinity;
  /** Requests in service in the server's other processes (shareConcurrency); undefined: this model is the whole server. */
  private others: number | undefined = undefined;

  private readonly options: ServiceQueueOptions;
  private readonly horizonMs: number;
  /** delay(c) now: the options' curve, or that curve under a fault (setFaultConditions). */
  private curve: SharedDelay;

  constructor(clock: Clock, options: ServiceQueueOptions) {
    super(clock, options);
    this.options = options;
    this.curve = options.delay;
    this.horizonMs = options.horizonMs ?? Infinity;
  }

  get concurrency(): number {
    return this.inService;
  }

  /** Past the horizon (passHorizon): nothing completes or leaves before it, so concurrency only rises. */
  get onlyRises(): boolean {
    return this.beyondHorizon;
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
    // No check of a stop here, unlike the pools: stop() only halts the timers, as it always has.
    // Shedding counts the whole server's requests, the other processes' included (shareConcurrency).
    if (this.refuses(this.inService + (this.others ?? 0) >= this.options.maxConcurrency, this.inService)) return undefined;
    if (this.beyondHorizon) return this.count();
    const ticket = this.store(onComplete as CompletionCallback | undefined, context);
    this.inService++;
    if (this.inService > this.peak) this.peak = this.inService;
    this.lastDelay = this.currentDelay();
    if (deadlineAt !== undefined) this.addDeadline(deadlineAt, ticket);
    if (!this.timerArmed) this.armForHead();
    else if (this.headStuckPastHorizon(this.lastDelay)) this.passHorizon();
    return ticket;
  }

  /** Admits a request that cannot complete before the horizon: a ticket and a count. */
  private count(): ServiceTicket {
    const ticket = this.tail++;
    this.head = this.tail;
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
    // Cancellations, expired deadlines and the other processes' requests lower c without a completion: then nothing is certain.
    if (this.options.cancelOnDisconnect || this.deadlines !== undefined || this.others !== undefined) return false;
    const dueAt = this.arrivedAt[this.head & (this.arrivedAt.length - 1)]! + delayMs - DUE_TOLERANCE_MS;
    return dueAt === Infinity || dueAt > this.horizonMs;
  }

  /**
   * No request in service can complete before the horizon (see the class comment): count
   * them, drop what was stored, and stop the timer.
   */
  private passHorizon(): void {
    this.beyondHorizon = true;
    this.countedFromTicket = this.head;
    this.countedTotal += this.tail - this.head;
    this.dropStored();
    this.clock.cancel(this.timer);
    this.timerArmed = false;
  }

  /**
   * The client of `ticket` went away. By default the request stays in service and holds
   * its slot until its delay has passed, which is what makes the failure metastable.
   */
  abandon(ticket: ServiceTicket): void {
    // A counted request stays in service to the horizon; it is abandoned once, by its one client.
    if (this.beyondHorizon && ticket >= this.countedFromTicket && ticket < this.tail) {
      this.abandonedInService++;
      return;
    }
    if (!this.markAbandoned(ticket)) return;
    if (!this.options.cancelOnDisconnect) {
      this.abandonedInService++;
      return;
    }
    this.states[ticket & (this.arrivedAt.length - 1)] = CANCELLED;
    this.inService--;
    this.cancelledTotal++;
    this.rearm();
  }

  snapshot(): ServiceSnapshot {
    // The peak's delay is the curve's at the peak, not a time measured: every request shares it.
    return this.tally(this.inService, this.curve.delayMs(this.peak));
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
    const lost = this.loseAll();
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

  /** delay(c) for the current concurrency c: this model's requests in service and the other processes'. */
  private currentDelay(): number {
    const concurrency = this.inService + (this.others ?? 0);
    if (concurrency !== this.delayConcurrency) {
      this.delayConcurrency = concurrency;
      this.delayForConcurrency = this.curve.delayMs(concurrency);
    }
    return this.delayForConcurrency;
  }

  /**
   * The other processes of the server hold `othersInService`: fewer bring the head's completion
   * forward (done now if due); more only postpone it, which the armed timer re-checks when it fires.
   */
  shareConcurrency(othersInService: number): void {
    const fewer = othersInService < (this.others ?? 0);
    this.others = othersInService;
    if (fewer) this.rearm();
    // The delay its requests in service have now, as the report line and the metrics read it.
    else this.lastDelay = this.currentDelay();
  }

  /** Skips cancelled requests at the head; false when none is in service. */
  private findHead(): boolean {
    const mask = this.arrivedAt.length - 1;
    while (this.head < this.tail && this.states[this.head & mask] === CANCELLED) this.head++;
    return this.head < this.tail;
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
    const dueAt = this.arrivedAt[this.head & (this.arrivedAt.length - 1)]! + delay;
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
      const slot = this.head & (this.arrivedAt.length - 1);
      if (now - this.arrivedAt[slot]! < delay - DUE_TOLERANCE_MS) return;
      if (this.head >= this.warmedTo) this.warmAhead(this.tail);
      this.head++;
      this.inService--;
      const callback = this.callbacks[slot];
      const context = this.contexts[slot];
      this.callbacks[slot] = undefined;
      this.contexts[slot] = undefined;
      // ServerBookkeeping's answer, written out: its call here costs 2 % (answer says why).
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
    const mask = this.arrivedAt.length - 1;
    // Most requests complete before their deadline: drop their entries now rather than wake for them.
    while (deadlines.size > 0) {
      const ticket = deadlines.topSequence();
      if (ticket >= this.head && this.states[ticket & mask] !== CANCELLED) break;
      deadlines.pop();
    }
    if (deadlines.size > 0) this.clock.arm(this.deadlineTimer, deadlines.topDueAt() - this.clock.now());
  }

  /** Takes every request whose deadline is at or before `now` out of service. */
  private expireDue(now: number): void {
    const deadlines = this.deadlines!;
    const mask = this.arrivedAt.length - 1;
    while (deadlines.size > 0 && deadlines.topDueAt() <= now) {
      const ticket = deadlines.topSequence();
      deadlines.pop();
      // Tickets before the head have left service already.
      if (ticket < this.head) continue;
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
      if (state === WAITED_FOR) callback?.(context, "expired");
      else this.abandonedInService--;
    }
  }
}

import type { Clock, Timer } from "./clock.ts";
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

export type Admission = "admitted" | "shed";

export type TicketState = "in-service" | "completed" | "cancelled";

export interface ServiceTicket {
  readonly arrivedAtMs: number;
  state: TicketState;
  /** Set when the client went away before its answer. */
  abandoned: boolean;
  readonly onComplete: ((ticket: ServiceTicket) => void) | undefined;
}

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
/** Compact the FIFO array once this many finished slots have piled up at its front. */
const COMPACT_THRESHOLD = 4096;

export class ServiceQueue {
  private readonly fifo: ServiceTicket[] = [];
  private headIndex = 0;
  private inService = 0;
  private timer: Timer | undefined;
  private lastDelay = 0;
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
   * full. `onComplete` runs when its delay has passed (not for a cancelled request).
   */
  admit(onComplete?: (ticket: ServiceTicket) => void): ServiceTicket | undefined {
    if (this.inService >= this.options.maxConcurrency) {
      this.shedTotal++;
      return undefined;
    }
    const ticket: ServiceTicket = {
      arrivedAtMs: this.clock.now(),
      state: "in-service",
      abandoned: false,
      onComplete,
    };
    this.fifo.push(ticket);
    this.inService++;
    this.admittedTotal++;
    if (this.inService > this.peak) this.peak = this.inService;
    this.lastDelay = modelledDelayMs(this.options.latency, this.inService);
    if (this.timer === undefined) this.armForHead();
    return ticket;
  }

  /**
   * The client of `ticket` went away. By default the request stays in service and holds
   * its slot until its delay has passed, which is what makes the failure metastable.
   */
  abandon(ticket: ServiceTicket): void {
    if (ticket.abandoned || ticket.state !== "in-service") return;
    ticket.abandoned = true;
    if (!this.options.cancelOnDisconnect) return;
    ticket.state = "cancelled";
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
    if (this.timer !== undefined) this.clock.cancel(this.timer);
    this.timer = undefined;
  }

  private head(): ServiceTicket | undefined {
    const fifo = this.fifo;
    while (this.headIndex < fifo.length && fifo[this.headIndex]!.state === "cancelled") this.headIndex++;
    if (this.headIndex >= COMPACT_THRESHOLD && this.headIndex * 2 >= fifo.length) {
      fifo.splice(0, this.headIndex);
      this.headIndex = 0;
    }
    return fifo[this.headIndex];
  }

  private rearm(): void {
    if (this.timer !== undefined) this.clock.cancel(this.timer);
    this.timer = undefined;
    this.releaseDue();
    this.armForHead();
  }

  private armForHead(): void {
    const head = this.head();
    if (head === undefined) return;
    const delay = modelledDelayMs(this.options.latency, this.inService);
    this.lastDelay = delay;
    const remaining = head.arrivedAtMs + delay - this.clock.now();
    this.timer = this.clock.schedule(remaining, this.onTimer);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.releaseDue();
    this.armForHead();
  };

  /** Completes, oldest first, every request whose age has reached delay(c) at this instant. */
  private releaseDue(): void {
    const now = this.clock.now();
    for (;;) {
      const head = this.head();
      if (head === undefined) return;
      const delay = modelledDelayMs(this.options.latency, this.inService);
      this.lastDelay = delay;
      if (now - head.arrivedAtMs < delay - DUE_TOLERANCE_MS) return;
      this.headIndex++;
      this.inService--;
      head.state = "completed";
      if (head.abandoned) {
        this.abandonedTotal++;
      } else {
        this.servedTotal++;
        head.onComplete?.(head);
      }
    }
  }
}

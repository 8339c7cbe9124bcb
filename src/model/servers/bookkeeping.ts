import type { Clock } from "../../clock/clock.ts";
import { drawsInjectedError, type ErrorInjection } from "./error-injection.ts";
import type { CompletionCallback, OutOfMemoryEvent, ServiceSnapshot } from "./server-model.ts";

/**
 * The default memory limit, in requests held (in service, or waiting for a thread). A Node
 * server keeps each request it holds, answered or abandoned, in about 4.8 KB of heap
 * (measured: 120 000 abandoned requests in service took 478 MB more RSS), so its default heap
 * of about 4 GB runs out near 800 000; V8 then aborts the process ("JavaScript heap out of
 * memory"). Descriptors are no such limit: a client that gives up closes its connection, and
 * the abandoned request holds no socket while the server holds it.
 */
export const DEFAULT_MAX_IN_SERVICE = 800_000;

/** What the bookkeeping reads of a model's options. */
export interface BookkeepingOptions {
  /**
   * Transient faults: each request that completes with its client still waiting is answered
   * as an error with probability `rate`, drawn from `random` (the everyday failures that
   * retries exist for). Off when undefined.
   */
  readonly errorInjection?: ErrorInjection | undefined;
  /** Requests the server's memory holds; one more and it runs out of memory. Infinity if omitted. */
  readonly maxInService?: number;
}

/**
 * What every server model keeps besides its requests: the counters its snapshot reports, its
 * peaks, the memory limit and what happens when it is crossed (`admit` refuses, `outOfMemory`
 * says when, the model stops, and its shell stops too: the server exits, the simulation
 * ends), and how a request that leaves is answered. ServiceQueue and OrderedPool extend it
 * through TicketRingServer (ticket-ring.ts), ThreadPool directly. Fields, not an object of
 * counts, so that the hot paths read and bump them on the model itself.
 */
export abstract class ServerBookkeeping {
  protected readonly clock: Clock;
  /** Requests held at which `refuses` looks closer: the memory limit, then -Infinity once out of memory. */
  private refuseFrom: number;
  private readonly errorInjection: ErrorInjection | undefined;
  /** The share answered as errors while an errors fault is on; undefined otherwise. */
  protected errorRateOverride: number | undefined = undefined;
  protected outOfMemoryEvent: OutOfMemoryEvent | undefined = undefined;
  protected lastDelay = 0;
  protected peak = 0;
  /** The longest time in the server since resetPeak, for the pools, which measure it (ServiceQueue reads its curve instead). */
  protected peakDelay = 0;
  protected mostStored = 0;
  /** Requests held but only counted: ServiceQueue's past its horizon; the pools store all they hold. */
  protected countedTotal = 0;
  protected admittedTotal = 0;
  protected servedTotal = 0;
  protected abandonedTotal = 0;
  /** Requests held whose client has gone (abandoned, not yet completed). */
  protected abandonedInService = 0;
  protected cancelledTotal = 0;
  protected shedTotal = 0;
  protected expiredTotal = 0;
  protected errorsInjectedTotal = 0;

  constructor(clock: Clock, options: BookkeepingOptions) {
    this.clock = clock;
    this.refuseFrom = options.maxInService ?? Infinity;
    this.errorInjection = options.errorInjection;
  }

  abstract readonly concurrency: number;
  abstract stop(): void;

  /** The delay the model last gave a request, ms; 0 before any. */
  get lastDelayMs(): number {
    return this.lastDelay;
  }

  /** The most requests stored at any one time. */
  get mostStoredRequests(): number {
    return this.mostStored;
  }

  /** Requests held only counted: they cannot complete within the run. */
  get countedRequests(): number {
    return this.countedTotal;
  }

  /** When the server ran out of memory; undefined while it has not. After it, `admit` takes nothing. */
  get outOfMemory(): OutOfMemoryEvent | undefined {
    return this.outOfMemoryEvent;
  }

  /**
   * For a request that brings a deadline: true, and the request is counted as expired, when
   * that deadline (on this model's clock) has already passed, as for a request that waited
   * in the accept queue longer than its client would wait. The caller then answers it
   * without taking it in.
   */
  expireOnArrival(deadlineAt: number): boolean {
    if (deadlineAt > this.clock.now()) return false;
    this.expiredTotal++;
    return true;
  }

  /** Resets the peaks so a reporter can show those of each interval. */
  resetPeak(): void {
    this.peak = this.concurrency;
    this.peakDelay = 0;
  }

  /**
   * Whether `admit` refuses a request, with `held` requests in the server: after running out
   * of memory, or shed (503) because the model is `full`, or because one more would not fit in
   * memory: then the server runs out of memory now, and stops. Shedding comes first: a server
   * that sheds never holds more than it sheds at.
   */
  protected refuses(full: boolean, held: number): boolean {
    // One test on admit's path, the rest in refusal: under 27 bytes of bytecode, so TurboFan inlines
    // it without spending its inlining budget (see answer), which refuses whole (81 bytes) spent.
    return (full || held >= this.refuseFrom) && this.refusal(full, held);
  }

  private refusal(full: boolean, held: number): boolean {
    if (this.outOfMemoryEvent !== undefined) return true;
    if (full) {
      this.shedTotal++;
      return true;
    }
    this.outOfMemoryEvent = { atMs: this.clock.now(), inService: held };
    this.refuseFrom = -Infinity;
    this.stop();
    return true;
  }

  /** A request left after `inServerMs` in the server (the pools' delay: waiting and service). */
  protected noteTimeInServer(inServerMs: number): void {
    this.lastDelay = inServerMs;
    if (inServerMs > this.peakDelay) this.peakDelay = inServerMs;
  }

  /**
   * Answers a request that completed: work done for nobody when its client had gone, else served
   * (or an injected error). ServiceQueue's completion loop writes these lines out rather than
   * call it: there the call cost the default model's simulation 2 % of its CPU (issue 35). What
   * TurboFan inlines into a function is capped (920 bytes of bytecode), and behind this one more
   * level the client's callback was no longer inlined into the completion loop, only into answer.
   */
  protected answer(abandoned: boolean, callback: CompletionCallback | undefined, context: unknown): void {
    if (abandoned) {
      this.abandonedTotal++;
      this.abandonedInService--;
      return;
    }
    this.servedTotal++;
    const completion = this.injectError() ? "injected-error" : "served";
    callback?.(context, completion);
  }

  /** The counts every model's snapshot reports, with `concurrency` requests in it now and its peak's delay. */
  protected tally(concurrency: number, peakDelayMs: number): ServiceSnapshot {
    return {
      concurrency,
      lastDelayMs: this.lastDelay,
      peakConcurrency: this.peak,
      peakDelayMs,
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

  /** A thread pool's snapshot (ThreadPool's, OrderedPool's): the counts, and its queue and threads now. */
  protected poolTally(queued: number, busy: number, threads: number): ServiceSnapshot {
    return { ...this.tally(busy + queued, this.peakDelay), queueLength: queued, threadsBusy: busy, threads };
  }

  /** Whether this answer is an injected error; draws only when injection is on. */
  protected injectError(): boolean {
    if (!drawsInjectedError(this.errorInjection, this.errorRateOverride)) return false;
    this.errorsInjectedTotal++;
    return true;
  }
}

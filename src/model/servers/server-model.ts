import type { FaultConditions } from "../faults/conditions.ts";

/**
 * The server models' one interface, which the real server's HTTP shell and the simulator's
 * network both drive, on either clock, and the types every model shares. The models and
 * their registry are beside it (kinds/, models.ts); a new model goes there (see docs/design.md).
 */

/** When the server ran out of memory, and with how many requests in service. */
export interface OutOfMemoryEvent {
  readonly atMs: number;
  readonly inService: number;
}

/**
 * How a request left service, as its completion callback is told: answered, answered with
 * an injected error, taken out at its deadline (see admit's `deadlineAt`), or, in a middle
 * tier (src/model/servers/upstream-pool.ts), failed because its upstream call failed for good.
 */
export type Completion = "served" | "injected-error" | "expired" | "upstream-failed";

/** What a model keeps per request to answer it: one function for many requests, called with each one's context. */
export type CompletionCallback = (context: unknown, completion: Completion) => void;

/**
 * A request taken into service: its number in the order of arrival. Numbers, not objects,
 * so that admitting a request allocates nothing.
 */
export type ServiceTicket = number;

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
  /** The queue model only (src/model/servers/queue.ts): requests waiting for a thread, */
  readonly queueLength?: number;
  /** threads serving a request now, */
  readonly threadsBusy?: number;
  /** and threads in all. */
  readonly threads?: number;
  /** A middle tier only (src/model/servers/upstream-pool.ts): its calls to the tier below. */
  readonly upstream?: UpstreamSnapshot;
}

/** What a middle tier did toward its upstream, totals since it started (in flight: now). */
export interface UpstreamSnapshot {
  /** First attempts sent upstream: the tier's own user requests (one per call, k for a fan-out of k). */
  readonly requests: number;
  /** Attempts sent upstream, first attempts and retries. */
  readonly attempts: number;
  /** Attempts ended, by outcome. */
  readonly attemptsOk: number;
  readonly attemptsError: number;
  readonly attemptsTimedout: number;
  /** Attempts the tier's own throttle or open breaker refused: never sent. */
  readonly refused: number;
  /** Calls that failed for good (after their attempts, or refused by the budget): answered 502. */
  readonly failures: number;
  /** Calls in flight now, each holding a thread. */
  readonly inFlight: number;
}

/** What every model does with requests: take them in, let their clients go, report its state. */
export interface ServerModel {
  /** Requests in the server now: in service, and for the queue model waiting for a thread. */
  readonly concurrency: number;
  /** The delay the model last gave a request, ms (the report line's "last delay"). */
  readonly lastDelayMs: number;
  /** When the server ran out of memory; undefined while it has not. After it, `admit` takes nothing. */
  readonly outOfMemory: OutOfMemoryEvent | undefined;
  /** Requests kept one by one now, the most ever kept, and those only counted (they cannot complete within the run). */
  readonly storedRequests: number;
  readonly mostStoredRequests: number;
  readonly countedRequests: number;
  /**
   * True once no request in service can leave before the run's horizon and none can be taken out
   * (no cancellation, deadline or fault that lowers it): its concurrency can only rise from now on.
   * Absent or false: not known.
   */
  readonly onlyRises?: boolean;
  /**
   * Takes a request in, or sheds it (503) or runs out of memory: undefined for both.
   * `onComplete` runs with `context` when it is answered (not for a request whose client went
   * away); with a `deadlineAt` the request may leave "expired" instead.
   */
  admit(onComplete?: (context: undefined, completion: Completion) => void): ServiceTicket | undefined;
  admit<C>(onComplete: (context: C, completion: Completion) => void, context: C, deadlineAt?: number): ServiceTicket | undefined;
  /** True, counting it as expired, when a request's deadline has passed before it arrived. */
  expireOnArrival(deadlineAt: number): boolean;
  /** The client of `ticket` went away. */
  abandon(ticket: ServiceTicket): void;
  snapshot(): ServiceSnapshot;
  /** Resets the peaks so a reporter can show those of each interval. */
  resetPeak(): void;
  /** Stops the model's timers; nothing in it completes any more. */
  stop(): void;
  /** Works under these fault conditions from now on (src/model/faults: capacity, slow, errors). */
  setFaultConditions(conditions: FaultConditions): void;
  /**
   * The server dies (a crash fault): every request in it is lost. Returns the contexts of
   * those whose clients still wait, for the caller to reset their connections.
   */
  crash(): unknown[];
  /**
   * Other processes of one server (./server -workers) hold this many requests in service:
   * the delay is the curve's at this model's own count plus theirs. Only the models whose
   * requests share one delay have it (the shared-delay models, ServiceQueue).
   */
  shareConcurrency?(othersInService: number): void;
}

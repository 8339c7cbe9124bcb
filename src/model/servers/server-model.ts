import type { Random } from "../../backoff/random.ts";
import type { Clock } from "../../clock/clock.ts";
import type { FaultConditions } from "../faults/conditions.ts";
import type { LatencyModel } from "../latency.ts";
import { type Completion, type OutOfMemoryEvent, ServiceQueue, type ServiceSnapshot, type ServiceTicket } from "../service-queue.ts";
import { exponentialFigures } from "./exponential.ts";
import { type LinearLatency, linearFigures } from "./linear.ts";
import { queueFigures, ThreadPool, type ThreadPoolShape } from "./queue.ts";

/**
 * The server models, one pure interface that the real server's HTTP shell and the
 * simulator's network both drive, on either clock. A new model is one file here that
 * implements ServerModel (or, for a shared delay, a DelayCurve for ServiceQueue), states its
 * figures, and is named in ServerModelSpec, createServerModel and modelFigures.
 */
export const SERVER_MODEL_KINDS = ["exponential", "linear", "queue"] as const;
export type ServerModelKind = (typeof SERVER_MODEL_KINDS)[number];

/** Which model, with its own parameters. */
export type ServerModelSpec =
  | { readonly kind: "exponential"; readonly latency: LatencyModel }
  | { readonly kind: "linear"; readonly latency: LinearLatency }
  | { readonly kind: "queue"; readonly pool: ThreadPoolShape };

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
}

/** What the server does around any model. */
export interface CommonServerOptions {
  readonly cancelOnDisconnect: boolean;
  /** Shedding above this many requests in service (the shared-delay models); Infinity for none. */
  readonly maxConcurrency: number;
  readonly errorInjection?: { readonly rate: number; readonly random: Random } | undefined;
  readonly maxInService?: number;
  /** The simulator's end of run (see ServiceQueue). */
  readonly horizonMs?: number;
  /** Draws the queue model's service times. */
  readonly serviceRandom: Random;
}

export function createServerModel(spec: ServerModelSpec, clock: Clock, options: CommonServerOptions): ServerModel {
  if (spec.kind === "queue") {
    return new ThreadPool(clock, {
      ...spec.pool,
      cancelOnDisconnect: options.cancelOnDisconnect,
      errorInjection: options.errorInjection,
      maxInService: options.maxInService ?? Infinity,
      random: options.serviceRandom,
    });
  }
  return new ServiceQueue(clock, {
    latency: spec.latency,
    cancelOnDisconnect: options.cancelOnDisconnect,
    maxConcurrency: options.maxConcurrency,
    errorInjection: options.errorInjection,
    maxInService: options.maxInService ?? Infinity,
    horizonMs: options.horizonMs ?? Infinity,
  });
}

/**
 * What a model can take, for clients that give up after `timeoutMs`:
 * - capacity: the most requests per second it answers within the timeout, and the
 *   requests in the server at which it does;
 * - tipping point: the requests in the server at which a new request's time there reaches
 *   the timeout, undefined where the model has none. Beyond it, clients that give up and
 *   retry only add work the server still does for nobody: the metastable region;
 * - overloadAbove: the verdict's line (src/model/verdict.ts): above this many requests in
 *   the server it is not back (the exponential model's limit, the linear model's tipping
 *   point less one, the queue model's threads plus a short queue).
 */
export interface ServerModelFigures {
  readonly capacityPerSec: number;
  readonly capacityAtConcurrency: number;
  readonly tippingConcurrency: number | undefined;
  readonly overloadAbove: number;
}

export function modelFigures(spec: ServerModelSpec, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  switch (spec.kind) {
    case "exponential":
      return exponentialFigures(spec.latency, timeoutMs, maxConcurrency);
    case "linear":
      return linearFigures(spec.latency, timeoutMs, maxConcurrency);
    case "queue":
      return queueFigures(spec.pool, timeoutMs);
  }
}

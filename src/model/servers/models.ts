import type { Random } from "../../backoff/random.ts";
import type { Clock } from "../../clock/clock.ts";
import type { LatencyModel } from "../latency.ts";
import { ServiceQueue } from "../service-queue.ts";
import { exponentialFigures } from "./exponential.ts";
import type { ServerModelFigures } from "./figures.ts";
import { type LinearLatency, linearFigures } from "./linear.ts";
import { OrderedPool } from "./ordered-pool.ts";
import { queueFigures, ThreadPool, type ThreadPoolOptions, type ThreadPoolShape } from "./queue.ts";
import { type UpstreamCaller, UpstreamPool } from "./upstream-pool.ts";
import type { ServerModel } from "./server-model.ts";

/**
 * The server models by name, for the programs: each kind with its own parameters, how to
 * make one, and its figures. A new model is one file in this folder that implements
 * ServerModel (or, for a shared delay, a DelayCurve for ServiceQueue) and states its
 * figures, named here.
 */
export const SERVER_MODEL_KINDS = ["exponential", "linear", "queue"] as const;
export type ServerModelKind = (typeof SERVER_MODEL_KINDS)[number];

/** Which model, with its own parameters. */
export type ServerModelSpec =
  | { readonly kind: "exponential"; readonly latency: LatencyModel }
  | { readonly kind: "linear"; readonly latency: LinearLatency }
  | { readonly kind: "queue"; readonly pool: ThreadPoolShape };

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
  /**
   * The caller's promise that no slow fault comes and no request brings a deadline: then a
   * fifo queue model with constant service times, without cancel-on-disconnect, is an
   * OrderedPool (the same answers, faster). The simulator knows its fault schedule; a real
   * server, whose faults come at any time, does not promise it.
   */
  readonly fixedServiceTime?: boolean;
}

function threadPoolOptions(pool: ThreadPoolShape, options: CommonServerOptions): ThreadPoolOptions {
  return {
    ...pool,
    cancelOnDisconnect: options.cancelOnDisconnect,
    errorInjection: options.errorInjection,
    maxInService: options.maxInService ?? Infinity,
    random: options.serviceRandom,
  };
}

export function createServerModel(spec: ServerModelSpec, clock: Clock, options: CommonServerOptions): ServerModel {
  if (spec.kind === "queue") {
    const pool = spec.pool;
    const ordered =
      options.fixedServiceTime === true && pool.serviceDist === "constant" && pool.queueOrder === "fifo" && !options.cancelOnDisconnect;
    return ordered ? new OrderedPool(clock, threadPoolOptions(pool, options)) : new ThreadPool(clock, threadPoolOptions(pool, options));
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

/** A middle tier's model: the queue model's pool whose requests hold their thread while `caller` makes their upstream calls. */
export function createUpstreamPool(
  pool: ThreadPoolShape,
  clock: Clock,
  options: CommonServerOptions,
  caller: UpstreamCaller,
): UpstreamPool {
  return new UpstreamPool(clock, threadPoolOptions(pool, options), caller);
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

import type { Random } from "../../backoff/random.ts";
import type { FlagSpec } from "../../cli/flags.ts";
import type { Clock } from "../../clock/clock.ts";
import type { FaultConditions } from "../faults/kind.ts";
import type { ServerModelFigures } from "./figures.ts";
import type { ServerModel } from "./server-model.ts";
import type { UpstreamCaller, UpstreamPool } from "./upstream-pool.ts";

/**
 * What a server model is: the one definition each model has (src/model/servers/kinds/), read
 * by the flag tables of ./server and ./sim, the probe's fits, the simulator, the real server
 * and choose. Code outside a model's file asks these properties, never the model's name
 * (test/unit/kind-names.test.ts), so a new model is its file, its test and one line in models.ts.
 */

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

/** A delay shared by every request in service, bound to its curve: what ServiceQueue asks. */
export interface SharedDelay {
  /** delay(c) in ms for c requests in service: never negative or NaN (Infinity at most). */
  readonly delayMs: (concurrency: number) => number;
  /** The same curve under fault conditions. */
  readonly under: (conditions: FaultConditions) => SharedDelay;
}

/** The curve of a shared-delay model (exponential, linear): its math on its own parameters. */
export interface DelayCurve<Curve> {
  readonly delayMs: (curve: Curve, concurrency: number) => number;
  /** The smallest concurrency whose delay reaches `delayMs` (a client timeout: the tipping point); Infinity when it never does. */
  readonly concurrencyForDelay: (curve: Curve, delayMs: number) => number;
  /** The curve while faults bend the conditions (a capacity or slow fault). */
  readonly under: (curve: Curve, conditions: FaultConditions) => Curve;
}

/** A model whose requests may hold their thread while they call the tier below (a middle tier). */
export interface MiddleTier<Spec> {
  /** Requests served at once, which bounds the calls in flight. */
  readonly threads: (spec: Spec) => number;
  readonly create: (spec: Spec, clock: Clock, options: CommonServerOptions, caller: UpstreamCaller) => UpstreamPool;
}

/** Where a model sheds load so that answers come within half the client timeout (choose's lever): a flag and its value. */
export interface LoadShedding {
  readonly flag: string;
  readonly at: number;
  /** What `at` counts: "in service (…)". */
  readonly where: string;
}

/**
 * One server model. `Values` are the flag values it reads (its own flags and those it shares);
 * methods take the model's own spec.
 */
export interface ServerModelDefinition<
  Name extends string = string,
  Spec extends { readonly kind: Name } = { readonly kind: Name },
  Flags extends readonly FlagSpec[] = readonly FlagSpec[],
  Values = never,
> {
  readonly name: Name;
  /** Its clause of -model's help: "linear (-baseDelay + -slope per request in service)". */
  readonly help: string;
  /** The flags it adds to the model flag table, in the table's order. */
  readonly flags: Flags;
  /** Every flag it reads; any other model flag set is a usage error. */
  readonly reads: readonly string[];
  /** Its spec from the flag values (the UsageError for values that do not fit together). */
  read(values: Values): Spec;
  /** The spec as flags would set it: `queue (8 threads, constant service time 20ms, fifo, unbounded queue)`. */
  describe(spec: Spec): string;
  /** The spec as the flags a scenario file's `system` holds, `model` first, in flag order (the probe's fits). */
  settings(spec: Spec): Record<string, string | number>;
  /** A fitted spec with its continuous parameters to the digits flags state them in. */
  rounded(spec: Spec): Spec;
  /** Mean latency of `concurrency` users in a closed loop with no think time, each also `overheadMs` outside the service. */
  closedLoopLatencyMs(spec: Spec, concurrency: number, overheadMs: number): number;
  figures(spec: Spec, timeoutMs: number, maxConcurrency: number): ServerModelFigures;
  create(spec: Spec, clock: Clock, options: CommonServerOptions): ServerModel;
  /** Whether it draws random numbers (and so needs a seed). */
  drawsRandom(spec: Spec): boolean;
  shedding(spec: Spec, timeoutMs: number): LoadShedding;
  /** A line of sim's analysis before the model's own, where the model has one. */
  timeoutNote?(spec: Spec, timeoutMs: number): string;
  /** Undefined: the model cannot be a middle tier. */
  readonly middleTier?: MiddleTier<Spec> | undefined;
  /** The shared delay of a spec, for the models ServiceQueue runs; undefined for the others. */
  sharedDelay?(spec: Spec): SharedDelay;
}

/** A model's definition, its name and flags kept as literal types for the registry's unions. */
export function defineServerModel<
  const Name extends string,
  Spec extends { readonly kind: Name },
  const Flags extends readonly FlagSpec[],
  Values,
>(definition: ServerModelDefinition<Name, Spec, Flags, Values>): ServerModelDefinition<Name, Spec, Flags, Values> {
  return Object.freeze(definition);
}

/** `value` to `digits` significant digits, as a fitted parameter is stated (rounded). */
export const significant = (value: number, digits: number): number => Number(value.toPrecision(digits));

import type { Random } from "../random.ts";
import type { ExactWaits } from "./exact-waits.ts";
import type { WaitContext, WaitShape } from "./wait-shape.ts";

/**
 * What a backoff policy kind is: the one definition each kind has (src/backoff/policies/), read
 * by the factories, validatePolicy and nextDelay (policy.ts, delay.ts), the client loop and the
 * simulator. Code outside a kind's file asks these properties, never the kind's name
 * (test/unit/kind-names.test.ts), so a new kind is its file, its test and one line in policies.ts,
 * plus the lists docs/design.md names.
 */

/** A policy as data: its kind and its parameters. */
export interface PolicyData {
  readonly kind: string;
}

/** Factory options: every parameter optional; `undefined` means "use the default". */
export type FactoryOptions<P extends PolicyData> = {
  readonly [K in Exclude<keyof P, "kind">]?: P[K] | undefined;
};

/*
 * Methods, not function-valued fields: a registry of every kind's definition is then one list
 * whose entries each take their own kind of policy.
 */
export interface PolicyDefinition<P extends PolicyData> {
  /** Every parameter's default, frozen: the one place a kind's defaults live. */
  readonly defaults: P;
  /** Its factory: the defaults filled, validated once, frozen. */
  create(options?: FactoryOptions<P>): P;
  /** The factory's name in thundering-herd/backoff, for code written with the library (a test holds it to the export). */
  readonly libraryName: string;
  /** Throws a FieldRangeError naming the first bad field. */
  check(policy: P): void;
  /** The wait after failure number `attempt` (>= 1), as nextDelay documents; `undefined` gives up. */
  delay(policy: P, attempt: number, previousDelayMs: number | undefined, random: Random): number | undefined;
  /** The wait before the very first attempt (attempt below 1); 0 where the kind has none. */
  waitBeforeFirstAttempt?(policy: P, random: Random): number;
  /**
   * Its first retry grows from the wait that preceded the failed attempt: for a closed user its
   * think time, so a caller with none (an open-loop arrival, an upstream call) draws one. Where it
   * does, the parameter it grows from where no think time precedes it (retry() has none); false
   * where it does not.
   */
  readonly firstWaitFollowsThinkTime: false | { readonly withoutThinkTime: keyof P & string };
  /** The one wait every retry waits, for a kind whose waits never vary (the simulator's FIFO timer lanes). */
  fixedWaitMs?(policy: P): number;
  /** Its waits exactly, in a form other systems' settings speak (check's writers read it); none where they are in no such form. */
  exactWaits?(policy: P): ExactWaits | undefined;
  /** Its waits as first × multiplier^(n-1), capped, with a jitter's form: the shape most retry libraries speak. */
  waitShape(policy: P, context: WaitContext): WaitShape;
  /**
   * Its wait before retry `attempt` (the name of a 1-based number in the code around it) as a
   * JavaScript expression, for the systems whose settings are code; it calls `normal()` (a
   * standard normal draw) where `drawsNormal` says so, and Math.random otherwise.
   */
  waitExpression(policy: P, attempt: string, context: WaitContext): string;
  readonly drawsNormal: boolean;
}

/** A kind's definition, frozen. */
export function definePolicy<P extends PolicyData>(definition: PolicyDefinition<P>): PolicyDefinition<P> {
  return Object.freeze(definition);
}

/**
 * The policy with each parameter the options set, the default's elsewhere, in the defaults'
 * field order; checked once and frozen. Only the defaults' fields are read, so a JavaScript
 * caller's stray option (a `kind` among them) changes nothing.
 */
export function filledPolicy<P extends PolicyData>(defaults: P, options: FactoryOptions<P>, check: (policy: P) => void): P {
  const given = options as Readonly<Record<string, unknown>>;
  const policy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(defaults)) policy[field] = field === "kind" ? value : (given[field] ?? value);
  check(policy as unknown as P);
  return Object.freeze(policy) as unknown as P;
}

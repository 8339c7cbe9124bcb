import {
  AT_LEAST_ONE,
  checkNumber,
  checkOrdered,
  describe,
  FieldRangeError,
  FRACTION,
  GOOGLE_MAX_RETRIES_LIMIT,
  NON_NEGATIVE,
} from "./validate.ts";

/**
 * e as the article's Go client writes it (`expFactor = 2.71828`); the default growth of the
 * exponential and reference policies.
 */
export const ARTICLE_FACTOR = 2.71828;

/*
 * Backoff policies as read-only data: a `kind` and its parameters, all times in
 * milliseconds. A policy holds no state, so one object can serve any number of clients;
 * `nextDelay` (delay.ts) turns it into waits. Each factory fills the defaults below,
 * validates once and returns a frozen policy.
 */

/**
 * Fixed interval: every retry waits `delayMs`. The reference client's default strategy
 * (`-simple-backoff-delay`) in Andrey Smirnov's "Exponential Backoff or how not to crash a server"
 * (https://github.com/smira/exponential-backoff).
 */
export interface ConstantPolicy {
  readonly kind: "constant";
  /** Wait before every retry, ms. Default 100. */
  readonly delayMs: number;
}

/**
 * The pseudo-code of "Exponential Backoff or how not to crash a server" (Andrey Smirnov), in
 * stateless form:
 * `base = min(minDelayMs * factor^n, maxDelayMs)`, `wait = max(0, base + N(0, jitter * base))`.
 * The first retry waits ~271.8 ms with the defaults.
 */
export interface ExponentialPolicy {
  readonly kind: "exponential";
  /** Starting delay, multiplied by `factor` once per failure, ms. Default 100. */
  readonly minDelayMs: number;
  /** Cap on the delay before jitter, ms. Default 300000 (5 min). */
  readonly maxDelayMs: number;
  /** Growth per failure, >= 1. Default ARTICLE_FACTOR (2.71828). */
  readonly factor: number;
  /** Standard deviation of the normal jitter as a fraction of the delay, in [0, 1]. Default 0.1. */
  readonly jitter: number;
}

/**
 * The reference Go client's `-exponential-backoff` (github.com/smira/exponential-backoff,
 * client.go): `wait = max(0, min(previous * factor, maxDelayMs) + N(0, jitterMs))`,
 * where `previous` is the wait that preceded the failed attempt — for the first failure the
 * client's own think time (10 s on average), so the first retry comes after ~27 s.
 * The jitter is absolute (N(0, 0.1 s)), not proportional.
 */
export interface ReferencePolicy {
  readonly kind: "reference";
  /** Base used when no previous wait is known, ms. Default 100. */
  readonly minDelayMs: number;
  /** Cap on the delay before jitter, ms. Default 300000 (5 min). */
  readonly maxDelayMs: number;
  /** Growth per failure, >= 1. Default ARTICLE_FACTOR (2.71828). */
  readonly factor: number;
  /** Standard deviation of the absolute normal jitter, ms. Default 100. */
  readonly jitterMs: number;
}

/**
 * A table of waits, saturating at its last entry (Peter Bourgon, "Simple backoff", Gopher Academy
 * Blog, https://blog.gopheracademy.com/advent-2014/backoff/): the wait
 * after the n-th failure is `jitter(delaysMs[min(n, length - 1)])`, with
 * `jitter(m) = m === 0 ? 0 : floor(m / 2) + uniformInt(m)`, i.e. uniform integer ms in
 * [m/2, 1.5m) as in the Go code. Entry 0 is the wait before the very first attempt
 * (attempt 0), as in the article's `retryConn` loop.
 */
export interface TablePolicy {
  readonly kind: "table";
  /** Waits by attempt, ms. Default [0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000]. */
  readonly delaysMs: readonly number[];
}

/**
 * Google's recipe (Google Cloud, "Exponential backoff",
 * https://cloud.google.com/memorystore/docs/redis/exponential-backoff): the wait after the n-th failure
 * is `2^(n-1) s + r`, `r` a fresh uniform integer in [0, 1000] ms; after `maxRetries`
 * retries it gives up. The five default waits total 31 s plus up to 5 s of jitter.
 */
export interface GooglePolicy {
  readonly kind: "google";
  /** Retries before giving up, an integer in [0, 1000]. Default 5. */
  readonly maxRetries: number;
}

/**
 * "Full jitter", AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015):
 * `wait = uniform(0, min(capMs, baseMs * 2^(n-1)))`.
 */
export interface FullJitterPolicy {
  readonly kind: "full-jitter";
  /** Ms. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

/**
 * "Equal jitter", same AWS article: with `temp = min(capMs, baseMs * 2^(n-1))`,
 * `wait = temp/2 + uniform(0, temp/2)`.
 */
export interface EqualJitterPolicy {
  readonly kind: "equal-jitter";
  /** Ms. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

/**
 * "Decorrelated jitter", same AWS article:
 * `wait = min(capMs, uniform(baseMs, 3 * previous))`, `previous` being the last wait
 * (`baseMs` for the first retry).
 */
export interface DecorrelatedJitterPolicy {
  readonly kind: "decorrelated-jitter";
  /** Lower bound of every wait, ms, > 0. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

/**
 * gRPC connection backoff (grpc/grpc doc/connection-backoff.md; grpc-go internal/backoff):
 * `b = min(initialMs * multiplier^(n-1), maxMs)`, `wait = b * (1 + uniform(-jitter, jitter))`.
 * The C-core document leaves the first wait unjittered; grpc-go jitters every wait, as here.
 */
export interface GrpcPolicy {
  readonly kind: "grpc";
  /** Ms. Default 1000. */
  readonly initialMs: number;
  /** Growth per failure, >= 1. Default 1.6. */
  readonly multiplier: number;
  /** Ms. Default 120000 (2 min). */
  readonly maxMs: number;
  /** Relative spread, in [0, 1]. Default 0.2. */
  readonly jitter: number;
}

export type BackoffPolicy =
  | ConstantPolicy
  | ExponentialPolicy
  | ReferencePolicy
  | TablePolicy
  | GooglePolicy
  | FullJitterPolicy
  | EqualJitterPolicy
  | DecorrelatedJitterPolicy
  | GrpcPolicy;

export type PolicyKind = BackoffPolicy["kind"];

/** The policy type for a kind, e.g. `PolicyOf<"grpc">` is `GrpcPolicy`. */
export type PolicyOf<K extends PolicyKind> = Extract<BackoffPolicy, { readonly kind: K }>;

/** Factory options: every parameter optional; `undefined` means "use the default". */
export type PolicyOptions<P extends BackoffPolicy> = {
  readonly [K in Exclude<keyof P, "kind">]?: P[K] | undefined;
};

/** Every policy with its default parameters; the one place defaults live. */
export const POLICY_DEFAULTS: { readonly [K in PolicyKind]: PolicyOf<K> } = Object.freeze({
  constant: Object.freeze({ kind: "constant", delayMs: 100 }),
  exponential: Object.freeze({
    kind: "exponential",
    minDelayMs: 100,
    maxDelayMs: 300_000,
    factor: ARTICLE_FACTOR,
    jitter: 0.1,
  }),
  reference: Object.freeze({
    kind: "reference",
    minDelayMs: 100,
    maxDelayMs: 300_000,
    factor: ARTICLE_FACTOR,
    jitterMs: 100,
  }),
  table: Object.freeze({
    kind: "table",
    delaysMs: Object.freeze([0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000]),
  }),
  google: Object.freeze({ kind: "google", maxRetries: 5 }),
  "full-jitter": Object.freeze({ kind: "full-jitter", baseMs: 100, capMs: 300_000 }),
  "equal-jitter": Object.freeze({ kind: "equal-jitter", baseMs: 100, capMs: 300_000 }),
  "decorrelated-jitter": Object.freeze({
    kind: "decorrelated-jitter",
    baseMs: 100,
    capMs: 300_000,
  }),
  grpc: Object.freeze({
    kind: "grpc",
    initialMs: 1000,
    multiplier: 1.6,
    maxMs: 120_000,
    jitter: 0.2,
  }),
});

/** All kinds, in a stable order (for flag parsing and help text). */
export const POLICY_KINDS: readonly PolicyKind[] = Object.freeze(Object.keys(POLICY_DEFAULTS) as PolicyKind[]);

export function isPolicyKind(value: string): value is PolicyKind {
  return Object.hasOwn(POLICY_DEFAULTS, value);
}

function finish<P extends BackoffPolicy>(policy: P): P {
  return Object.freeze(validatePolicy(policy));
}

export function constantPolicy(options: PolicyOptions<ConstantPolicy> = {}): ConstantPolicy {
  const defaults = POLICY_DEFAULTS.constant;
  return finish({ kind: "constant", delayMs: options.delayMs ?? defaults.delayMs });
}

export function exponentialPolicy(options: PolicyOptions<ExponentialPolicy> = {}): ExponentialPolicy {
  const defaults = POLICY_DEFAULTS.exponential;
  return finish({
    kind: "exponential",
    minDelayMs: options.minDelayMs ?? defaults.minDelayMs,
    maxDelayMs: options.maxDelayMs ?? defaults.maxDelayMs,
    factor: options.factor ?? defaults.factor,
    jitter: options.jitter ?? defaults.jitter,
  });
}

export function referencePolicy(options: PolicyOptions<ReferencePolicy> = {}): ReferencePolicy {
  const defaults = POLICY_DEFAULTS.reference;
  return finish({
    kind: "reference",
    minDelayMs: options.minDelayMs ?? defaults.minDelayMs,
    maxDelayMs: options.maxDelayMs ?? defaults.maxDelayMs,
    factor: options.factor ?? defaults.factor,
    jitterMs: options.jitterMs ?? defaults.jitterMs,
  });
}

export function tablePolicy(options: PolicyOptions<TablePolicy> = {}): TablePolicy {
  const delaysMs = options.delaysMs ?? POLICY_DEFAULTS.table.delaysMs;
  // Validate the caller's array, then keep a frozen copy so later mutation cannot leak in.
  validatePolicy({ kind: "table", delaysMs });
  return Object.freeze({ kind: "table", delaysMs: Object.freeze([...delaysMs]) });
}

export function googlePolicy(options: PolicyOptions<GooglePolicy> = {}): GooglePolicy {
  return finish({
    kind: "google",
    maxRetries: options.maxRetries ?? POLICY_DEFAULTS.google.maxRetries,
  });
}

export function fullJitterPolicy(options: PolicyOptions<FullJitterPolicy> = {}): FullJitterPolicy {
  return awsJitterPolicy("full-jitter", options);
}

export function equalJitterPolicy(options: PolicyOptions<EqualJitterPolicy> = {}): EqualJitterPolicy {
  return awsJitterPolicy("equal-jitter", options);
}

export function decorrelatedJitterPolicy(options: PolicyOptions<DecorrelatedJitterPolicy> = {}): DecorrelatedJitterPolicy {
  return awsJitterPolicy("decorrelated-jitter", options);
}

/** The three AWS formulas share their parameters (base and cap) and differ only in kind. */
function awsJitterPolicy<K extends "full-jitter" | "equal-jitter" | "decorrelated-jitter">(
  kind: K,
  options: PolicyOptions<PolicyOf<K>>,
): PolicyOf<K> {
  const defaults = POLICY_DEFAULTS[kind];
  return finish({
    kind,
    baseMs: options.baseMs ?? defaults.baseMs,
    capMs: options.capMs ?? defaults.capMs,
  } as PolicyOf<K>);
}

export function grpcPolicy(options: PolicyOptions<GrpcPolicy> = {}): GrpcPolicy {
  const defaults = POLICY_DEFAULTS.grpc;
  return finish({
    kind: "grpc",
    initialMs: options.initialMs ?? defaults.initialMs,
    multiplier: options.multiplier ?? defaults.multiplier,
    maxMs: options.maxMs ?? defaults.maxMs,
    jitter: options.jitter ?? defaults.jitter,
  });
}

function checkTable(field: string, table: unknown): void {
  if (!Array.isArray(table)) throw new FieldRangeError(field, "must be an array of numbers", describe(table));
  if (table.length === 0) throw new FieldRangeError(field, "must not be empty", "[]");
  table.forEach((entry: unknown, index) => checkNumber(field, entry, NON_NEGATIVE, index));
}

/** The parameters the article's exponential formula and the reference program's share. */
function checkGrowth(policy: { minDelayMs: number; maxDelayMs: number; factor: number }): void {
  checkNumber("minDelayMs", policy.minDelayMs, NON_NEGATIVE);
  checkNumber("maxDelayMs", policy.maxDelayMs, NON_NEGATIVE);
  checkOrdered("minDelayMs", policy.minDelayMs, "maxDelayMs", policy.maxDelayMs);
  checkNumber("factor", policy.factor, AT_LEAST_ONE);
}

/**
 * Throws a RangeError naming the first bad field of `policy`; returns the policy unchanged.
 * The factories call it; call it yourself for policies written as literals or parsed from
 * configuration.
 */
export function validatePolicy<P extends BackoffPolicy>(policy: P): P {
  // `policy` is typed, but it may come from JavaScript or JSON: check the kind too.
  const candidate: BackoffPolicy = policy;
  switch (candidate.kind) {
    case "constant":
      checkNumber("delayMs", candidate.delayMs, NON_NEGATIVE);
      break;
    case "exponential":
      checkGrowth(candidate);
      checkNumber("jitter", candidate.jitter, FRACTION);
      break;
    case "reference":
      checkGrowth(candidate);
      checkNumber("jitterMs", candidate.jitterMs, NON_NEGATIVE);
      break;
    case "table":
      checkTable("delaysMs", candidate.delaysMs);
      break;
    case "google":
      checkNumber("maxRetries", candidate.maxRetries, {
        min: 0,
        max: GOOGLE_MAX_RETRIES_LIMIT,
        integer: true,
      });
      break;
    case "full-jitter":
    case "equal-jitter":
      checkNumber("baseMs", candidate.baseMs, NON_NEGATIVE);
      checkNumber("capMs", candidate.capMs, NON_NEGATIVE);
      checkOrdered("baseMs", candidate.baseMs, "capMs", candidate.capMs);
      break;
    case "decorrelated-jitter":
      // With baseMs 0 every wait would be uniform(0, 3 * 0) = 0 forever.
      checkNumber("baseMs", candidate.baseMs, { above: 0 });
      checkNumber("capMs", candidate.capMs, NON_NEGATIVE);
      checkOrdered("baseMs", candidate.baseMs, "capMs", candidate.capMs);
      break;
    case "grpc":
      checkNumber("initialMs", candidate.initialMs, NON_NEGATIVE);
      checkNumber("maxMs", candidate.maxMs, NON_NEGATIVE);
      checkOrdered("initialMs", candidate.initialMs, "maxMs", candidate.maxMs);
      checkNumber("multiplier", candidate.multiplier, AT_LEAST_ONE);
      checkNumber("jitter", candidate.jitter, FRACTION);
      break;
    default: {
      const kind: unknown = (candidate as { kind: unknown }).kind;
      throw new FieldRangeError("kind", "must be a known policy kind", describe(kind));
    }
  }
  return policy;
}

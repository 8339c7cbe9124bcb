/*
 * Checks run once, when a policy or limit is built; after that the hot path trusts its
 * inputs. Every message names the field, the rule and the value received, e.g.
 * `factor must be >= 1 (got 0.5)`.
 */

/**
 * Google's waits double per retry; past ~1023 retries 2^(n-1) s overflows to Infinity.
 * 1000 retries already means waits of 10^290 years, so the limit costs nothing.
 */
export const GOOGLE_MAX_RETRIES_LIMIT = 1000;

/** gRPC A6 `retryThrottling.maxTokens` must lie in (0, 1000]. */
export const RETRY_BUDGET_MAX_TOKENS_LIMIT = 1000;

export interface NumberRule {
  /** Inclusive lower bound. */
  readonly min?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  /** Inclusive upper bound. */
  readonly max?: number;
  readonly integer?: boolean;
  /** Accept +Infinity (as "no limit"); otherwise the value must be finite. */
  readonly allowInfinity?: boolean;
}

/** A received value as a message shows it: numbers plain, strings quoted, arrays listed. */
export function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(describe).join(", ")}]`;
  return String(value);
}

/** Throws a RangeError unless `value` is a number obeying `rule`; returns it otherwise. */
export function checkNumber(field: string, value: unknown, rule: NumberRule = {}): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new RangeError(`${field} must be a number (got ${describe(value)})`);
  }
  const infinityAllowed = rule.allowInfinity === true && value === Infinity;
  if (!Number.isFinite(value) && !infinityAllowed) {
    throw new RangeError(`${field} must be finite (got ${describe(value)})`);
  }
  if (rule.integer === true && !Number.isInteger(value) && !infinityAllowed) {
    throw new RangeError(`${field} must be an integer (got ${describe(value)})`);
  }
  if (rule.min !== undefined && value < rule.min) {
    throw new RangeError(`${field} must be >= ${rule.min} (got ${describe(value)})`);
  }
  if (rule.above !== undefined && value <= rule.above) {
    throw new RangeError(`${field} must be > ${rule.above} (got ${describe(value)})`);
  }
  if (rule.max !== undefined && value > rule.max) {
    throw new RangeError(`${field} must be <= ${rule.max} (got ${describe(value)})`);
  }
  return value;
}

/** Throws unless `lowField <= highField`. */
export function checkOrdered(lowField: string, low: number, highField: string, high: number): void {
  if (low > high) {
    throw new RangeError(`${lowField} must be <= ${highField} (got ${low} > ${high})`);
  }
}

/** Rules several checks share. */
export const NON_NEGATIVE: NumberRule = { min: 0 };
export const AT_LEAST_ONE: NumberRule = { min: 1 };
export const FRACTION: NumberRule = { min: 0, max: 1 };

/** `maxAttempts` counts every attempt including the first: an integer >= 1, or Infinity. */
export function validateMaxAttempts(maxAttempts: number): number {
  return checkNumber("maxAttempts", maxAttempts, { min: 1, integer: true, allowInfinity: true });
}

/**
 * gRPC A6 retryThrottling: maxTokens in (0, 1000], tokenRatio > 0, both with up to 3
 * decimal places, so the smallest usable value is 0.001 (anything smaller would round
 * to 0 and the budget would never refill).
 */
export function validateRetryBudget(maxTokens: number, tokenRatio: number): void {
  checkNumber("maxTokens", maxTokens, { min: 0.001, max: RETRY_BUDGET_MAX_TOKENS_LIMIT });
  checkNumber("tokenRatio", tokenRatio, { min: 0.001 });
}

/** A bucket smaller than one token could never grant a request. */
export function validateTokenBucket(capacity: number, refillPerSecond: number): void {
  checkNumber("capacity", capacity, AT_LEAST_ONE);
  checkNumber("refillPerSecond", refillPerSecond, NON_NEGATIVE);
}

/** Factory options: every field optional; `undefined` means "use the default". */
export type OptionsOf<T> = { readonly [K in keyof T]?: T[K] | undefined };

/** The defaults with the options that are set laid over them (`{ k: undefined }` keeps the default). */
export function withDefaults<T extends object>(defaults: T, options: OptionsOf<T>): T {
  const merged = { ...defaults };
  for (const key of Object.keys(options) as (keyof T)[]) {
    const value = options[key];
    if (value !== undefined) merged[key] = value as T[keyof T];
  }
  return merged;
}

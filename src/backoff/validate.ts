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

/**
 * A field out of its range: a RangeError with the same message as ever (`factor must be >= 1
 * (got 0.5)`), that also carries the field's name, so that a program can name the field in
 * its own words (a command-line flag) without reading the message.
 */
export class FieldRangeError extends RangeError {
  /** The field, e.g. `minDelayMs`. */
  readonly field: string;
  /** Which entry of the field, for a list. */
  readonly index: number | undefined;
  /** The field it must be ordered against, for a rule between two fields (`minDelayMs must be <= maxDelayMs`). */
  readonly otherField: string | undefined;
  private readonly rule: string;
  private readonly received: string;

  constructor(field: string, rule: string, received: string, options: { index?: number; otherField?: string } = {}) {
    super(fieldMessage(field, options.index, rule, options.otherField, received, (name) => name));
    this.field = field;
    this.index = options.index;
    this.otherField = options.otherField;
    this.rule = rule;
    this.received = received;
  }

  /** The message with each field named by `name`, e.g. `-min-delay (ms) must be <= -max-delay (ms) (got 2000 > 1000)`. */
  describe(name: (field: string) => string): string {
    return fieldMessage(this.field, this.index, this.rule, this.otherField, this.received, name);
  }
}

function fieldMessage(
  field: string,
  index: number | undefined,
  rule: string,
  otherField: string | undefined,
  received: string,
  name: (field: string) => string,
): string {
  const subject = index === undefined ? name(field) : `${name(field)}[${index}]`;
  return `${subject} ${rule}${otherField === undefined ? "" : ` ${name(otherField)}`} (got ${received})`;
}

/** Throws a FieldRangeError unless `value` is a number obeying `rule`; returns it otherwise. */
export function checkNumber(field: string, value: unknown, rule: NumberRule = {}, index?: number): number {
  const fail = (requirement: string) => new FieldRangeError(field, requirement, describe(value), index === undefined ? {} : { index });
  if (typeof value !== "number" || Number.isNaN(value)) throw fail("must be a number");
  const infinityAllowed = rule.allowInfinity === true && value === Infinity;
  if (!Number.isFinite(value) && !infinityAllowed) throw fail("must be finite");
  if (rule.integer === true && !Number.isInteger(value) && !infinityAllowed) throw fail("must be an integer");
  if (rule.min !== undefined && value < rule.min) throw fail(`must be >= ${rule.min}`);
  if (rule.above !== undefined && value <= rule.above) throw fail(`must be > ${rule.above}`);
  if (rule.max !== undefined && value > rule.max) throw fail(`must be <= ${rule.max}`);
  return value;
}

/** Throws unless `lowField <= highField`. */
export function checkOrdered(lowField: string, low: number, highField: string, high: number): void {
  if (low > high) throw new FieldRangeError(lowField, "must be <=", `${low} > ${high}`, { otherField: highField });
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

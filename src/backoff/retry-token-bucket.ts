import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * A retry token bucket that requests fill and retries drain, with no clock: the bucket of
 * two published simulations, which differ only in their constants.
 *
 * - Yandex, "Good Retry, Bad Retry" (2023; github.com/jirfag/simulations, retry_strategies.py
 *   RetryBudgetStrategy): a retry costs 100 tokens; a first try that succeeds earns
 *   retry_budget_ratio x 100 (10 at their 10 %), a successful retry earns nothing ("otherwise
 *   retry budget will allow 2 x budget retries in partial failure scenarios"); the bucket
 *   holds 30 retries' worth (3000) and starts full; a retry is allowed while tokens >= 100.
 * - Marc Brooker, "Fixing retries with token buckets and circuit breakers" (2022;
 *   github.com/mbrooker/simulator_example, retry_sim/retry_strategy.py AdaptiveRetryStrategy):
 *   every new request (success or not) adds 0.1 to a bucket of 5 that starts full; a retry is
 *   allowed while the bucket holds more than 1 token, and takes 1. It has no cap of its own
 *   on the retries of one request.
 *
 * Unlike gRPC's budget (budget.ts) failures cost nothing here: only retries do.
 * Counted in thousandths of a token so that Brooker's tenths add up exactly.
 */
export interface RetryTokenBucket {
  /** The bucket's size and starting value, tokens, > 0. */
  readonly capacity: number;
  /** What a retry takes, tokens, > 0. */
  readonly retryCost: number;
  /** What a request earns, tokens, >= 0. */
  readonly earn: number;
  /** When it earns: at every new request (Brooker), or when a first try succeeds (Yandex). */
  readonly earnOn: "request" | "first-try-success";
  /** A retry needs more tokens than it costs (Brooker's `bucket > 1.0`), or at least as many (Yandex's). */
  readonly strictlyAbove: boolean;
}

/** Yandex's retry_budget_ratio: what a successful first try earns, as a fraction of a retry's cost. */
export const YANDEX_BUDGET_RATIO = 0.1;
const YANDEX_RETRY_COST = 100;
/** MAX_CONSECUTIVE_RETRIES_BEFORE_THROTTLING in their code. */
const YANDEX_RETRIES_HELD = 30;

/**
 * Yandex's retry budget. `ratio` is their retry_budget_ratio in [0.01, 1] (as their assert);
 * the earning is truncated to whole tokens as their int().
 */
export function yandexRetryBudget(ratio = YANDEX_BUDGET_RATIO): RetryTokenBucket {
  checkNumber("ratio", ratio, { min: 0.01, max: 1 });
  return retryTokenBucket({
    capacity: YANDEX_RETRY_COST * YANDEX_RETRIES_HELD,
    retryCost: YANDEX_RETRY_COST,
    earn: Math.trunc(ratio * YANDEX_RETRY_COST),
    earnOn: "first-try-success",
    strictlyAbove: false,
  });
}

export const BROOKER_TOKEN_BUCKET: RetryTokenBucket = Object.freeze({
  capacity: 5,
  retryCost: 1,
  earn: 0.1,
  earnOn: "request",
  strictlyAbove: true,
});

export function retryTokenBucket(options: OptionsOf<RetryTokenBucket> = {}): RetryTokenBucket {
  const bucket = withDefaults(BROOKER_TOKEN_BUCKET, options);
  checkNumber("capacity", bucket.capacity, { above: 0 });
  checkNumber("retryCost", bucket.retryCost, { above: 0, max: bucket.capacity });
  checkNumber("earn", bucket.earn, { min: 0 });
  return Object.freeze(bucket);
}

const MILLI = 1000;
const toMilli = (tokens: number) => Math.round(tokens * MILLI);

/** The buckets of `instances` independent clients (instance numbers from 0), each starting full. */
export class RetryTokenBuckets {
  readonly bucket: RetryTokenBucket;
  private readonly milli: Float64Array;
  private readonly capacityMilli: number;
  private readonly costMilli: number;
  private readonly earnMilli: number;

  constructor(bucket: RetryTokenBucket = BROOKER_TOKEN_BUCKET, instances = 1) {
    this.bucket = bucket;
    this.capacityMilli = toMilli(bucket.capacity);
    this.costMilli = toMilli(bucket.retryCost);
    this.earnMilli = toMilli(bucket.earn);
    this.milli = new Float64Array(instances).fill(this.capacityMilli);
  }

  tokens(instance = 0): number {
    return this.milli[instance]! / MILLI;
  }

  /** A new request starts (its first try). */
  requestStarted(instance = 0): void {
    if (this.bucket.earnOn === "request") this.earn(instance);
  }

  /** An attempt succeeded; `isRetry` says whether it was a retry. */
  succeeded(isRetry: boolean, instance = 0): void {
    if (this.bucket.earnOn === "first-try-success" && !isRetry) this.earn(instance);
  }

  /** Takes a retry's cost if the bucket allows the retry; a refusal takes nothing. */
  tryTakeRetry(instance = 0): boolean {
    const held = this.milli[instance]!;
    const allowed = this.bucket.strictlyAbove ? held > this.costMilli : held >= this.costMilli;
    if (allowed) this.milli[instance] = held - this.costMilli;
    return allowed;
  }

  private earn(instance: number): void {
    this.milli[instance] = Math.min(this.capacityMilli, this.milli[instance]! + this.earnMilli);
  }
}

import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * The retry quota of the AWS SDKs' "standard" retry mode (AWS SDKs and Tools Reference
 * Guide, "Retry behavior", https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html;
 * aws-sdk-js-v3 @aws-sdk/util-retry constants and StandardRetryStrategy, and the older
 * middleware-retry `getDefaultRetryQuota`): a bucket of 500 tokens per client; a retry is
 * allowed only if the bucket holds its cost, which it then takes: 5 tokens, or 10 when the
 * failure was a timeout. A request that succeeds gives back what its last retry cost, or 1
 * token when it succeeded without a retry, up to the bucket's size. So a client retries
 * freely while most requests succeed, and stops retrying after about 100 failed retries in
 * a row (500 / 5) until successes refill the bucket.
 *
 * The SDKs' standard mode changed on November 10, 2026 (AWS Developer Tools Blog, "Updated
 * default retry behavior for AWS SDKs and tools"): a retry costs 14, a throttled one 5,
 * timeouts are no longer special, and the base backoff is 50 ms. The defaults here stay the
 * long-standing ones (the `aws-standard-pre-2026` preset); the `aws-standard` preset sets
 * the new costs through the parameters (presets.ts).
 */
export interface AwsRetryQuota {
  /** The bucket's size and starting value, tokens, an integer >= 1. Default 500. */
  readonly tokens: number;
  /** What a retry takes, an integer >= 1. Default 5 (RETRY_COST). */
  readonly retryCost: number;
  /** What a retry after a timeout takes, an integer >= 1. Default 10 (TIMEOUT_RETRY_COST). */
  readonly timeoutRetryCost: number;
  /** What a success without retry gives back. Default 1 (NO_RETRY_INCREMENT). */
  readonly noRetryIncrement: number;
}

export const AWS_RETRY_QUOTA_DEFAULTS: AwsRetryQuota = Object.freeze({
  tokens: 500,
  retryCost: 5,
  timeoutRetryCost: 10,
  noRetryIncrement: 1,
});

export function awsRetryQuota(options: OptionsOf<AwsRetryQuota> = {}): AwsRetryQuota {
  const quota = withDefaults(AWS_RETRY_QUOTA_DEFAULTS, options);
  checkNumber("tokens", quota.tokens, { min: 1, integer: true });
  checkNumber("retryCost", quota.retryCost, { min: 1, max: quota.tokens, integer: true });
  checkNumber("timeoutRetryCost", quota.timeoutRetryCost, { min: 1, max: quota.tokens, integer: true });
  checkNumber("noRetryIncrement", quota.noRetryIncrement, { min: 0, integer: true });
  return Object.freeze(quota);
}

/** What a retry after this failure costs. */
export function awsRetryCost(quota: AwsRetryQuota, afterTimeout: boolean): number {
  return afterTimeout ? quota.timeoutRetryCost : quota.retryCost;
}

/** The quota's state for `instances` independent clients (instance numbers from 0), each starting full. */
export class AwsQuotaState {
  readonly quota: AwsRetryQuota;
  private readonly available: Float64Array;

  constructor(quota: AwsRetryQuota = AWS_RETRY_QUOTA_DEFAULTS, instances = 1) {
    this.quota = quota;
    this.available = new Float64Array(instances).fill(quota.tokens);
  }

  /** Tokens in the bucket. */
  tokens(instance = 0): number {
    return this.available[instance]!;
  }

  /**
   * Takes a retry's cost if the bucket holds it and returns the cost (to give back if the
   * retry succeeds), or 0 when the retry is refused; a refusal takes nothing.
   */
  tryAcquire(afterTimeout: boolean, instance = 0): number {
    const cost = awsRetryCost(this.quota, afterTimeout);
    if (cost > this.available[instance]!) return 0;
    this.available[instance]! -= cost;
    return cost;
  }

  /** A request succeeded; `lastRetryCost` is what its last retry cost, 0 if it needed none. */
  recordSuccess(lastRetryCost: number, instance = 0): void {
    const refund = lastRetryCost > 0 ? lastRetryCost : this.quota.noRetryIncrement;
    this.available[instance] = Math.min(this.quota.tokens, this.available[instance]! + refund);
  }
}

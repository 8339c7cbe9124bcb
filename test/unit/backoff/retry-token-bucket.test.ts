import { describe, expect, it } from "vitest";
import { BROOKER_TOKEN_BUCKET, RetryTokenBuckets, retryTokenBucket, yandexRetryBudget } from "../../../src/backoff/retry-token-bucket.ts";

describe("retry token bucket: Yandex's retry budget", () => {
  it("holds 30 retries of 100 tokens, and a successful first try earns ratio x 100, truncated", () => {
    expect(yandexRetryBudget()).toEqual({ capacity: 3000, retryCost: 100, earn: 10, earnOn: "first-try-success", strictlyAbove: false });
    expect(yandexRetryBudget(0.255).earn).toBe(25);
    expect(() => yandexRetryBudget(0.001)).toThrow(/ratio must be >= 0.01/);
  });

  it("allows 30 retries from a full bucket, then one more per ten successful first tries", () => {
    const buckets = new RetryTokenBuckets(yandexRetryBudget());
    for (let retry = 0; retry < 30; retry++) expect(buckets.tryTakeRetry()).toBe(true);
    expect(buckets.tokens()).toBe(0);
    expect(buckets.tryTakeRetry()).toBe(false);
    for (let success = 0; success < 9; success++) buckets.succeeded(false);
    expect(buckets.tryTakeRetry()).toBe(false); // 90 < 100, and the refusal took nothing
    expect(buckets.tokens()).toBe(90);
    buckets.succeeded(false);
    expect(buckets.tryTakeRetry()).toBe(true); // 100 >= 100
  });

  it("earns nothing for a successful retry, nor for a new request, and never passes its size", () => {
    const buckets = new RetryTokenBuckets(yandexRetryBudget(), 2);
    buckets.tryTakeRetry(1);
    buckets.succeeded(true, 1);
    buckets.requestStarted(1);
    expect(buckets.tokens(1)).toBe(2900);
    buckets.succeeded(false, 0);
    expect(buckets.tokens(0)).toBe(3000);
  });
});

describe("retry token bucket: Brooker's", () => {
  it("is a bucket of 5 that every new request fills by 0.1, whatever its outcome", () => {
    const buckets = new RetryTokenBuckets(BROOKER_TOKEN_BUCKET);
    for (let retry = 0; retry < 4; retry++) expect(buckets.tryTakeRetry()).toBe(true);
    expect(buckets.tokens()).toBe(1);
    expect(buckets.tryTakeRetry()).toBe(false); // needs more than 1
    buckets.succeeded(false);
    expect(buckets.tokens()).toBe(1);
    buckets.requestStarted();
    expect(buckets.tokens()).toBe(1.1);
    expect(buckets.tryTakeRetry()).toBe(true);
    expect(buckets.tokens()).toBe(0.1);
  });

  it("counts tenths exactly: ten requests make one token", () => {
    const buckets = new RetryTokenBuckets(retryTokenBucket({ capacity: 5 }));
    for (let retry = 0; retry < 4; retry++) buckets.tryTakeRetry();
    for (let request = 0; request < 10; request++) buckets.requestStarted();
    expect(buckets.tokens()).toBe(2);
    for (let request = 0; request < 100; request++) buckets.requestStarted();
    expect(buckets.tokens()).toBe(5);
  });

  it("refuses a cost above the bucket's size", () => {
    expect(() => retryTokenBucket({ capacity: 1, retryCost: 2 })).toThrow(/retryCost must be <= 1/);
  });
});

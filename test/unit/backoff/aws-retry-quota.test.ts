import { describe, expect, it } from "vitest";
import { AwsQuotaState, awsRetryCost, awsRetryQuota } from "../../../src/backoff/aws-retry-quota.ts";

describe("AWS standard retry quota", () => {
  it("defaults to the SDK constants: 500 tokens, a retry 5, after a timeout 10, a clean success 1", () => {
    const quota = awsRetryQuota();
    expect(quota).toEqual({ tokens: 500, retryCost: 5, timeoutRetryCost: 10, noRetryIncrement: 1 });
    expect([awsRetryCost(quota, false), awsRetryCost(quota, true)]).toEqual([5, 10]);
  });

  it("takes 10 tokens for a retry after a timeout and 5 after another failure", () => {
    const state = new AwsQuotaState();
    expect(state.tryAcquire(true)).toBe(10);
    expect(state.tokens()).toBe(490);
    expect(state.tryAcquire(false)).toBe(5);
    expect(state.tokens()).toBe(485);
  });

  it("refuses a retry when fewer tokens are left than it costs, and takes nothing then", () => {
    const state = new AwsQuotaState(awsRetryQuota({ tokens: 14 }));
    expect(state.tryAcquire(true)).toBe(10);
    expect(state.tokens()).toBe(4);
    expect(state.tryAcquire(false)).toBe(0); // 4 < 5
    expect(state.tryAcquire(true)).toBe(0);
    expect(state.tokens()).toBe(4);
    state.recordSuccess(0);
    expect(state.tryAcquire(false)).toBe(5); // 5 <= 5
    expect(state.tokens()).toBe(0);
  });

  it("gives back a successful retry's cost, or 1 for a success without retry, never above the size", () => {
    const state = new AwsQuotaState(awsRetryQuota(), 2);
    state.tryAcquire(true, 1);
    state.tryAcquire(false, 1);
    expect(state.tokens(1)).toBe(485);
    state.recordSuccess(5, 1);
    expect(state.tokens(1)).toBe(490);
    state.recordSuccess(0, 1);
    expect(state.tokens(1)).toBe(491);
    state.recordSuccess(10, 0);
    expect(state.tokens(0)).toBe(500);
  });

  it("stops a client after 100 failed retries in a row until successes refill it", () => {
    const state = new AwsQuotaState();
    let retries = 0;
    while (state.tryAcquire(false) > 0) retries++;
    expect(retries).toBe(100);
    for (let success = 0; success < 4; success++) state.recordSuccess(0);
    expect(state.tryAcquire(false)).toBe(0);
    state.recordSuccess(0);
    expect(state.tryAcquire(false)).toBe(5);
  });

  it("rejects costs that do not fit the bucket", () => {
    expect(() => awsRetryQuota({ tokens: 8 })).toThrow("timeoutRetryCost must be <= 8 (got 10)");
    expect(() => awsRetryQuota({ retryCost: 0 })).toThrow("retryCost must be >= 1 (got 0)");
  });
});

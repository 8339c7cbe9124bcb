import { describe, expect, it } from "vitest";
// The sources behind "thundering-herd/backoff"; test/e2e/package.test.ts imports the built package itself.
import * as backoff from "../../../src/backoff/index.ts";

describe("public surface (thundering-herd/backoff)", () => {
  it("exports exactly the documented values", () => {
    expect(Object.keys(backoff).sort()).toEqual(
      [
        "ADAPTIVE_THROTTLE_DEFAULTS",
        "ARTICLE_FACTOR",
        "AWS_RETRY_QUOTA_DEFAULTS",
        "AdaptiveThrottle",
        "AwsQuotaState",
        "BREAKER_PASS",
        "BREAKER_PROBE",
        "BREAKER_REJECT",
        "BROOKER_RETRY_BREAKER",
        "BROOKER_TOKEN_BUCKET",
        "CIRCUIT_BREAKER_DEFAULTS",
        "CircuitBreakers",
        "ENVOY_RETRY_BUDGET_DEFAULTS",
        "FINAGLE_RETRY_BUDGET_DEFAULTS",
        "FinagleBudgetState",
        "GOOGLE_MAX_RETRIES_LIMIT",
        "POLICY_DEFAULTS",
        "POLICY_KINDS",
        "RETRY_BUDGET_DEFAULTS",
        "RETRY_BUDGET_MAX_TOKENS_LIMIT",
        "RetryBreakers",
        "RetryTokenBuckets",
        "RollingCounts",
        "YANDEX_BUDGET_RATIO",
        "YANDEX_RETRY_BREAKER",
        "adaptiveThrottleConfig",
        "attemptAllowed",
        "awsRetryCost",
        "awsRetryQuota",
        "budgetAfterFailure",
        "budgetAfterSuccess",
        "budgetAllowsRetry",
        "consecutiveBreaker",
        "constantPolicy",
        "decorrelatedJitterPolicy",
        "envoyAllowsRetry",
        "envoyRetryBudget",
        "envoyRetryLimit",
        "equalJitterPolicy",
        "exponentialPolicy",
        "finagleRetryBudget",
        "fullJitterPolicy",
        "googlePolicy",
        "grpcPolicy",
        "initialBucketState",
        "initialBudgetState",
        "isPolicyKind",
        "nextDelay",
        "parseRetryAfter",
        "referencePolicy",
        "retry",
        "retryBudget",
        "retryBreaker",
        "retryTokenBucket",
        "samplingBreaker",
        "seededRandom",
        "sleep",
        "sreRejectProbability",
        "tablePolicy",
        "takeToken",
        "tokenBucket",
        "tokensAt",
        "validateMaxAttempts",
        "validatePolicy",
        "yandexRetryBudget",
      ].sort(),
    );
  });

  it("runs the documented reconnect loop", async () => {
    const policy = backoff.tablePolicy({ delaysMs: [0, 10, 20] });
    const random = backoff.seededRandom(42);
    const outcomes = [false, false, true]; // two refused connections, then one that works
    let attempt = 0;
    const waits: number[] = [];
    for (const connected of outcomes) {
      const wait = backoff.nextDelay(policy, attempt, undefined, random) ?? 0;
      waits.push(wait);
      await backoff.sleep(wait);
      if (!connected) attempt++;
      else attempt = 0;
    }
    expect(attempt).toBe(0);
    const [first = -1, second = -1, third = -1] = waits;
    expect(first).toBe(0); // entry 0: no failure yet
    expect(second).toBeGreaterThanOrEqual(5); // entry 1: [5, 15)
    expect(second).toBeLessThan(15);
    expect(third).toBeGreaterThanOrEqual(10); // entry 2: [10, 30)
    expect(third).toBeLessThan(30);
  });
});

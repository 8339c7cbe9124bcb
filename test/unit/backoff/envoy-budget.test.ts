import { describe, expect, it } from "vitest";
import { ENVOY_RETRY_BUDGET_DEFAULTS, envoyAllowsRetry, envoyRetryBudget, envoyRetryLimit } from "../../../src/backoff/envoy-budget.ts";

describe("Envoy retry budget", () => {
  it("defaults to 20 % and a minimum of 3, as circuit_breaker.proto says", () => {
    expect(envoyRetryBudget()).toEqual({ budgetPercent: 20, minRetryConcurrency: 3 });
    expect(ENVOY_RETRY_BUDGET_DEFAULTS).toEqual(envoyRetryBudget());
  });

  it("allows 5 retries in progress for 25 active requests, and not a sixth", () => {
    const budget = envoyRetryBudget();
    expect(envoyRetryLimit(budget, 25)).toBe(5);
    expect(envoyAllowsRetry(budget, 25, 4)).toBe(true);
    expect(envoyAllowsRetry(budget, 25, 5)).toBe(false);
  });

  it("never goes below min_retry_concurrency and rounds the share down", () => {
    const budget = envoyRetryBudget();
    expect([0, 1, 14, 19, 20, 24, 100].map((active) => envoyRetryLimit(budget, active))).toEqual([3, 3, 3, 3, 4, 4, 20]);
    expect(envoyRetryLimit(envoyRetryBudget({ budgetPercent: 25, minRetryConcurrency: 0 }), 100)).toBe(25);
    expect(envoyAllowsRetry(envoyRetryBudget({ minRetryConcurrency: 0 }), 0, 0)).toBe(false);
  });

  it("rejects a percentage outside (0, 100] and a fractional minimum", () => {
    expect(() => envoyRetryBudget({ budgetPercent: 0 })).toThrow("budgetPercent must be > 0 (got 0)");
    expect(() => envoyRetryBudget({ budgetPercent: 120 })).toThrow("budgetPercent must be <= 100 (got 120)");
    expect(() => envoyRetryBudget({ minRetryConcurrency: 2.5 })).toThrow("minRetryConcurrency must be an integer (got 2.5)");
  });
});

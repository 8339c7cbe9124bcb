import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * Envoy's retry budget (envoy api/envoy/config/cluster/v3/circuit_breaker.proto,
 * `CircuitBreakers.Thresholds.RetryBudget`; envoyproxy/envoy PR 9069): a limit on retries in
 * progress at once, relative to the requests in progress:
 *
 *     active retries < max(min_retry_concurrency, budget_percent / 100 * active requests)
 *
 * the product rounded down, as Envoy's `RetryBudgetImpl::max()` does with its integer cast.
 * "If there are 100 active requests and the budget_percent is set to 25, there may be 25
 * active retries." A retry holds its place from the moment it is decided, through its
 * backoff wait, until its attempt has finished (Envoy's RetryStateImpl takes the retry
 * resource in `shouldRetry` and gives it back at the next decision or when the request ends).
 * Unlike a token budget it has no memory: it limits concurrency, not a rate.
 */
export interface EnvoyRetryBudget {
  /** Retries in progress allowed per request in progress, percent, in (0, 100]. Default 20. */
  readonly budgetPercent: number;
  /** Retries in progress always allowed, an integer >= 0. Default 3. */
  readonly minRetryConcurrency: number;
}

export const ENVOY_RETRY_BUDGET_DEFAULTS: EnvoyRetryBudget = Object.freeze({ budgetPercent: 20, minRetryConcurrency: 3 });

export function envoyRetryBudget(options: OptionsOf<EnvoyRetryBudget> = {}): EnvoyRetryBudget {
  const budget = withDefaults(ENVOY_RETRY_BUDGET_DEFAULTS, options);
  checkNumber("budgetPercent", budget.budgetPercent, { above: 0, max: 100 });
  checkNumber("minRetryConcurrency", budget.minRetryConcurrency, { min: 0, integer: true });
  return Object.freeze(budget);
}

/** How many retries may be in progress while `activeRequests` requests are (25 active requests: 5). */
export function envoyRetryLimit(budget: EnvoyRetryBudget, activeRequests: number): number {
  return Math.max(budget.minRetryConcurrency, Math.floor((budget.budgetPercent / 100) * activeRequests));
}

/** Whether one more retry may start while `activeRetries` retries and `activeRequests` requests are in progress. */
export function envoyAllowsRetry(budget: EnvoyRetryBudget, activeRequests: number, activeRetries: number): boolean {
  return activeRetries < envoyRetryLimit(budget, activeRequests);
}

// Public surface of thundering-herd/backoff: re-exports only.
export type {
  BackoffPolicy,
  ConstantPolicy,
  DecorrelatedJitterPolicy,
  EqualJitterPolicy,
  ExponentialPolicy,
  FullJitterPolicy,
  GooglePolicy,
  GrpcPolicy,
  PolicyKind,
  PolicyOf,
  PolicyOptions,
  ReferencePolicy,
  TablePolicy,
} from "./policy.ts";
export {
  ARTICLE_FACTOR,
  POLICY_DEFAULTS,
  POLICY_KINDS,
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  isPolicyKind,
  referencePolicy,
  tablePolicy,
  validatePolicy,
} from "./policy.ts";
export { nextDelay } from "./delay.ts";
export { GOOGLE_MAX_RETRIES_LIMIT, RETRY_BUDGET_MAX_TOKENS_LIMIT, validateMaxAttempts } from "./validate.ts";
export type {
  RetryBudget,
  RetryBudgetOptions,
  RetryBudgetState,
  TokenBucket,
  TokenBucketOptions,
  TokenBucketState,
  TokenTake,
} from "./budget.ts";
export {
  RETRY_BUDGET_DEFAULTS,
  attemptAllowed,
  budgetAfterFailure,
  budgetAfterSuccess,
  budgetAllowsRetry,
  initialBucketState,
  initialBudgetState,
  retryBudget,
  takeToken,
  tokenBucket,
  tokensAt,
} from "./budget.ts";
export type { AttemptContext, RetryDecision, RetryInfo, RetryOptions } from "./retry.ts";
export { parseRetryAfter } from "./retry-after.ts";
export { retry, sleep } from "./retry.ts";
export type { Random } from "./random.ts";
export { seededRandom } from "./random.ts";
export { RollingCounts } from "./rolling-window.ts";
export type { EnvoyRetryBudget } from "./envoy-budget.ts";
export { ENVOY_RETRY_BUDGET_DEFAULTS, envoyAllowsRetry, envoyRetryBudget, envoyRetryLimit } from "./envoy-budget.ts";
export type { FinagleRetryBudget } from "./finagle-budget.ts";
export { FINAGLE_RETRY_BUDGET_DEFAULTS, FinagleBudgetState, finagleRetryBudget } from "./finagle-budget.ts";
export type { AwsRetryQuota } from "./aws-retry-quota.ts";
export { AWS_RETRY_QUOTA_DEFAULTS, AwsQuotaState, awsRetryCost, awsRetryQuota } from "./aws-retry-quota.ts";
export type { AdaptiveThrottleConfig } from "./adaptive-throttle.ts";
export { ADAPTIVE_THROTTLE_DEFAULTS, AdaptiveThrottle, adaptiveThrottleConfig, sreRejectProbability } from "./adaptive-throttle.ts";
export type { BreakerState, BreakerVerdict, CircuitBreakerConfig } from "./circuit-breaker.ts";
export {
  CIRCUIT_BREAKER_DEFAULTS,
  CircuitBreakers,
  consecutiveBreaker,
  BREAKER_PASS,
  BREAKER_PROBE,
  BREAKER_REJECT,
  samplingBreaker,
} from "./circuit-breaker.ts";
export type { RetryTokenBucket } from "./retry-token-bucket.ts";
export { BROOKER_TOKEN_BUCKET, RetryTokenBuckets, retryTokenBucket, YANDEX_BUDGET_RATIO, yandexRetryBudget } from "./retry-token-bucket.ts";
export type { RetryBreakerConfig } from "./retry-breaker.ts";
export { BROOKER_RETRY_BREAKER, RetryBreakers, retryBreaker, YANDEX_RETRY_BREAKER } from "./retry-breaker.ts";

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
} from "./policy.ts";
export { nextDelay } from "./delay.ts";
export { GOOGLE_MAX_RETRIES_LIMIT, RETRY_BUDGET_MAX_TOKENS_LIMIT, validateMaxAttempts, validatePolicy } from "./validate.ts";
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

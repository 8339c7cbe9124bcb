import { validateRetryBudget, validateTokenBucket } from "./validate.ts";

/*
 * Retry limits as pure values: configuration and state go in, new state comes out, time
 * is an argument. Nothing here mutates its inputs, so one configuration can serve any
 * number of clients, each holding its own state.
 */

// ---- maxAttempts -----------------------------------------------------------------------

/**
 * Whether attempt number `attempt` may start. Attempts are counted from 1 and include the
 * original call, as gRPC A6's `maxAttempts` does: with maxAttempts 3 the original call and
 * two retries run. After `failures` consecutive failures the next attempt is `failures + 1`.
 * `maxAttempts` is an integer >= 1 or Infinity (no limit); check it once with
 * `validateMaxAttempts` (validate.ts).
 */
export function attemptAllowed(maxAttempts: number, attempt: number): boolean {
  return attempt <= maxAttempts;
}

// ---- retry budget: gRPC retry throttling ----------------------------------------------

/**
 * gRPC retry throttling (grpc/proposal A6-client-retries.md, "retryThrottling"): tokens
 * start at `maxTokens`; every failed attempt costs 1 token, every success earns
 * `tokenRatio`; retries are allowed only while tokens > maxTokens / 2. So retries stop
 * once failures outnumber successes by about 1/tokenRatio over the recent past, whatever
 * the backoff says.
 */
export interface RetryBudget {
  /** Token ceiling and starting value, in [0.001, 1000], 3 decimal places. Default 10. */
  readonly maxTokens: number;
  /** Tokens earned per success, >= 0.001, 3 decimal places (as A6). Default 0.1. */
  readonly tokenRatio: number;
}

export interface RetryBudgetState {
  /** Between 0 and maxTokens, a multiple of 0.001. */
  readonly tokens: number;
}

export const RETRY_BUDGET_DEFAULTS: RetryBudget = Object.freeze({ maxTokens: 10, tokenRatio: 0.1 });

/*
 * A6 supports 3 decimal places and gRPC implementations count in thousandths of a token;
 * doing the same keeps the "> maxTokens / 2" test exact (no 4.999999 after ten 0.1s).
 */
const MILLI = 1000;

function toMilli(tokens: number): number {
  return Math.round(tokens * MILLI);
}

export interface RetryBudgetOptions {
  readonly maxTokens?: number | undefined;
  readonly tokenRatio?: number | undefined;
}

export function retryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  const maxTokens = options.maxTokens ?? RETRY_BUDGET_DEFAULTS.maxTokens;
  const tokenRatio = options.tokenRatio ?? RETRY_BUDGET_DEFAULTS.tokenRatio;
  validateRetryBudget(maxTokens, tokenRatio);
  return Object.freeze({
    maxTokens: toMilli(maxTokens) / MILLI,
    tokenRatio: toMilli(tokenRatio) / MILLI,
  });
}

/** A full budget: tokens = maxTokens. */
export function initialBudgetState(budget: RetryBudget): RetryBudgetState {
  return { tokens: budget.maxTokens };
}

/** After any successful attempt: +tokenRatio, at most maxTokens. */
export function budgetAfterSuccess(budget: RetryBudget, state: RetryBudgetState): RetryBudgetState {
  const max = toMilli(budget.maxTokens);
  const current = toMilli(state.tokens);
  if (current >= max) return state;
  return { tokens: Math.min(max, current + toMilli(budget.tokenRatio)) / MILLI };
}

/** After any failed attempt, original or retry: -1, at least 0. */
export function budgetAfterFailure(_budget: RetryBudget, state: RetryBudgetState): RetryBudgetState {
  const current = toMilli(state.tokens);
  if (current <= 0) return state;
  return { tokens: Math.max(0, current - MILLI) / MILLI };
}

/** Whether a retry may be sent now: tokens > maxTokens / 2. */
export function budgetAllowsRetry(budget: RetryBudget, state: RetryBudgetState): boolean {
  return toMilli(state.tokens) * 2 > toMilli(budget.maxTokens);
}

// ---- token bucket ---------------------------------------------------------------------

/**
 * A classic token bucket with the clock passed in: holds up to `capacity` tokens, refills
 * continuously at `refillPerSecond`, and each retry takes one whole token. Unlike the
 * retry budget it limits retries per unit of time, whatever the success rate.
 */
export interface TokenBucket {
  /** Most tokens held (the burst), >= 1. */
  readonly capacity: number;
  /** Tokens added per second of elapsed time, >= 0. */
  readonly refillPerSecond: number;
}

export interface TokenBucketState {
  readonly tokens: number;
  /** The time the tokens were counted at, ms on the caller's clock. */
  readonly updatedAtMs: number;
}

export interface TokenTake {
  readonly allowed: boolean;
  readonly state: TokenBucketState;
}

export interface TokenBucketOptions {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/** No defaults: the right rate depends entirely on the caller's load. */
export function tokenBucket(options: TokenBucketOptions): TokenBucket {
  validateTokenBucket(options.capacity, options.refillPerSecond);
  return Object.freeze({ capacity: options.capacity, refillPerSecond: options.refillPerSecond });
}

/** A full bucket at `nowMs`. */
export function initialBucketState(bucket: TokenBucket, nowMs: number): TokenBucketState {
  return { tokens: bucket.capacity, updatedAtMs: nowMs };
}

/** Tokens held at `nowMs`, after refilling. A clock that steps back refills nothing. */
export function tokensAt(bucket: TokenBucket, state: TokenBucketState, nowMs: number): number {
  const elapsedMs = nowMs > state.updatedAtMs ? nowMs - state.updatedAtMs : 0;
  return Math.min(bucket.capacity, state.tokens + (elapsedMs / 1000) * bucket.refillPerSecond);
}

/** Refills up to `nowMs`, then takes one token if a whole one is there. */
export function takeToken(bucket: TokenBucket, state: TokenBucketState, nowMs: number): TokenTake {
  const tokens = tokensAt(bucket, state, nowMs);
  const updatedAtMs = nowMs > state.updatedAtMs ? nowMs : state.updatedAtMs;
  const allowed = tokens >= 1;
  return { allowed, state: { tokens: allowed ? tokens - 1 : tokens, updatedAtMs } };
}

import { nextDelay } from "../backoff/delay.ts";
import type { BackoffPolicy } from "../backoff/policy.ts";
import { policyDefinition } from "../backoff/policies.ts";
import { attemptAllowed } from "../backoff/budget.ts";
import type { FleetConfig } from "./client-instances.ts";
import type { AttemptOutcome } from "./outcome.ts";
import type { Random } from "../backoff/random.ts";

/**
 * One simulated user, as the reference client's goroutine: wait, send, classify; after an
 * OK wait an exponentially distributed think time; after a failure wait what the retry
 * policy says for the n-th consecutive failure; a success resets n. A refused retry
 * (attempt limit, budget, or a policy that gives up) abandons the request: the user goes
 * back to its think time. An attempt refused locally (throttled, or rejected by an open
 * breaker) is a failure like any other for this loop.
 */
export interface RetryConfig {
  readonly backoff: BackoffPolicy;
  /** Mean think time between a user's requests, ms (the reference's lambda, in seconds there). */
  readonly thinkTimeMeanMs: number;
  /** Attempts per request including the first; Infinity for no limit. */
  readonly maxAttempts: number;
  /** Retry budgets, throttles and breakers, and how many client instances share them; none when undefined. */
  readonly fleet?: FleetConfig | undefined;
  /**
   * Hedging (src/backoff/hedge.ts): the next copy of a request goes out this many ms after
   * the previous unless an answer came, up to maxAttempts copies; a request whose copies all
   * failed is given up, never retried (gRPC A6: a retryPolicy or a hedgingPolicy, not both).
   * Undefined: no hedging.
   */
  readonly hedgeDelayMs?: number | undefined;
  /** Wait at least what a server's Retry-After asks before the next attempt (see honorServerWait). Default false. */
  readonly honorRetryAfter?: boolean | undefined;
}

/** Where the loop asks whether a retry may go, when a retry budget is in force. */
export interface RetryGate {
  /** Whether a retry may follow this failed attempt; a yes takes the retry's share of the budget. */
  allowRetry(outcome: AttemptOutcome): boolean;
}

export interface UserState {
  /** Consecutive failures of the current request. */
  failures: number;
  /** The wait that preceded the last attempt, ms (a policy whose first wait follows the think time grows from it). */
  lastWaitMs: number;
}

export type Decision = "think" | "retry" | "give-up";

export function initialUserState(_config: RetryConfig): UserState {
  return { failures: 0, lastWaitMs: 0 };
}

/** The first wait of a user, before its first request. */
export function firstWait(config: RetryConfig, state: UserState, random: Random): number {
  state.lastWaitMs = random.exponential(config.thinkTimeMeanMs);
  return state.lastWaitMs;
}

/**
 * Updates `state` for an attempt's outcome and returns the decision; the wait before the
 * next attempt is the new `state.lastWaitMs` (no object per attempt: this is the herd's hot path).
 * The gate, when given, has the last word on a retry that the attempt limit and the policy
 * allow, so that a budget is charged only for retries that would otherwise happen.
 */
export function decideAfterAttempt(
  config: RetryConfig,
  state: UserState,
  outcome: AttemptOutcome,
  random: Random,
  gate?: RetryGate,
): Decision {
  if (outcome === "ok") {
    state.failures = 0;
    return think(config, state, random, "think");
  }
  state.failures++;
  if (config.hedgeDelayMs !== undefined) return giveUp(config, state, random);
  if (!attemptAllowed(config.maxAttempts, state.failures + 1)) return giveUp(config, state, random);
  // A first failure's wait grows from the think time before it only where the policy says so;
  // any other (decorrelated jitter) grows from its own previous retry wait, and starts from its base.
  const previousWaitMs =
    state.failures > 1 || policyDefinition(config.backoff.kind).firstWaitFollowsThinkTime ? state.lastWaitMs : undefined;
  const delay = nextDelay(config.backoff, state.failures, previousWaitMs, random);
  if (delay === undefined) return giveUp(config, state, random);
  if (gate !== undefined && !gate.allowRetry(outcome)) return giveUp(config, state, random);
  state.lastWaitMs = delay;
  return "retry";
}

function giveUp(config: RetryConfig, state: UserState, random: Random): Decision {
  state.failures = 0;
  return think(config, state, random, "give-up");
}

function think(config: RetryConfig, state: UserState, random: Random, decision: Decision): Decision {
  state.lastWaitMs = random.exponential(config.thinkTimeMeanMs);
  return decision;
}

/**
 * A server-directed wait (HTTP Retry-After, RFC 9110 section 10.2.3) as a floor under the
 * wait just decided: with `honorRetryAfter`, the user's next attempt, a retry or a new
 * request, comes no earlier than the server asked. Call it after decideAfterAttempt with
 * the attempt's result; a policy that waits longer keeps its own wait.
 */
export function honorServerWait(config: RetryConfig, state: UserState, result: { readonly retryAfterMs?: number }): void {
  // The config first: reading a field most results lack is not free on the herd's hot path.
  if (config.honorRetryAfter !== true) return;
  const retryAfterMs = result.retryAfterMs;
  if (retryAfterMs !== undefined && retryAfterMs > state.lastWaitMs) state.lastWaitMs = retryAfterMs;
}

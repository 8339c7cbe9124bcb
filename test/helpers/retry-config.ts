import { constantPolicy } from "../../src/backoff/index.ts";
import type { Random } from "../../src/backoff/random.ts";
import { type Decision, decideAfterAttempt, type RetryConfig, type RetryGate, type UserState } from "../../src/model/client-loop.ts";
import type { AttemptOutcome } from "../../src/model/outcome.ts";

/** The reference client's defaults (fixed 100 ms retries, 10 s think time), with overrides. */
export const retryConfig = (overrides: Partial<RetryConfig> = {}): RetryConfig => ({
  backoff: constantPolicy({ delayMs: 100 }),
  thinkTimeMeanMs: 10_000,
  maxAttempts: Infinity,
  ...overrides,
});

/** One step of the client loop as an object, for readable expectations. */
export function afterAttempt(
  config: RetryConfig,
  state: UserState,
  outcome: AttemptOutcome,
  random: Random,
  gate?: RetryGate,
): { decision: Decision; waitMs: number } {
  const decision = decideAfterAttempt(config, state, outcome, random, gate);
  return { decision, waitMs: state.lastWaitMs };
}

import { constantPolicy } from "../../src/backoff/index.ts";
import type { Random } from "../../src/backoff/random.ts";
import { type Decision, decideAfterAttempt, type RetryConfig, type UserState } from "../../src/model/client-loop.ts";
import type { Outcome } from "../../src/model/outcome.ts";

/** The reference client's defaults (fixed 100 ms retries, 10 s think time), with overrides. */
export const retryConfig = (overrides: Partial<RetryConfig> = {}): RetryConfig => ({
  backoff: constantPolicy({ delayMs: 100 }),
  thinkTimeMeanMs: 10_000,
  maxAttempts: Infinity,
  budget: undefined,
  ...overrides,
});

/** One step of the client loop as an object, for readable expectations. */
export function afterAttempt(
  config: RetryConfig,
  state: UserState,
  outcome: Outcome,
  random: Random,
): { decision: Decision; waitMs: number } {
  const decision = decideAfterAttempt(config, state, outcome, random);
  return { decision, waitMs: state.lastWaitMs };
}

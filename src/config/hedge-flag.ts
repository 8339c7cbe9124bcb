import type { FlagSpec } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { POLICY_DEFAULTS } from "../backoff/policy.ts";
import type { RetryConfig } from "../model/client-loop.ts";
import { hedgingProblem } from "../model/client-instances.ts";

/** The client's hedging flag (src/backoff/hedge.ts): one entry of its flag table, so every program that reads the table has it. */
export const HEDGE_DELAY_FLAG = {
  name: "hedge-delay",
  group: "strategy",
  kind: "duration",
  default: undefined,
  minMs: 0,
  description:
    "hedge instead of retrying (gRPC's hedgingPolicy): send another copy of a request this long after the previous unless one answered, " +
    "up to -max-attempts copies; a 5xx, 429 or timeout sends the next at once; the first success is kept, the others cancelled",
} as const satisfies FlagSpec;

/**
 * Hedging and retry backoff are exclusive, as in gRPC A6 (a method has a retryPolicy or a
 * hedgingPolicy): with -hedge-delay the strategy stays the default fixed one with its
 * default or a zero wait (never used: a hedged request whose copies all failed is given up),
 * -max-attempts says how many copies (2 or more); of the protections, those that published
 * designs compose with hedging (hedgingProblem, src/model/client-instances.ts).
 */
export function checkHedging(values: { readonly "simple-backoff-delay": number }, strategy: string, retry: RetryConfig): void {
  if (retry.hedgeDelayMs === undefined) return;
  if (strategy !== "fixed") {
    throw new UsageError(
      `-hedge-delay replaces retry backoff (gRPC: a hedgingPolicy or a retryPolicy); it cannot be combined with -strategy ${strategy}`,
    );
  }
  const fixedWait = values["simple-backoff-delay"];
  if (fixedWait !== 0 && fixedWait !== POLICY_DEFAULTS.constant.delayMs) {
    throw new UsageError(
      "-hedge-delay replaces retry backoff: a hedged request is never retried, so -simple-backoff-delay would not be used",
    );
  }
  if (!Number.isFinite(retry.maxAttempts) || retry.maxAttempts < 2) {
    throw new UsageError("-hedge-delay needs -max-attempts 2 or more: the copies of a request, the first included");
  }
  const problem = retry.fleet === undefined ? undefined : hedgingProblem(retry.fleet);
  if (problem !== undefined) {
    throw new UsageError(
      `-hedge-delay cannot be combined with ${problem}: with hedging, the budget is -budget grpc (gRPC A6 charges hedges to it), ` +
        "the breaker a circuit breaker (-breaker consecutive or sampling), and -throttle counts every copy",
    );
  }
}

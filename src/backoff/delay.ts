import type { Random } from "./random.ts";
import { knownPolicyDefinition, type BackoffPolicy } from "./policies.ts";

/**
 * The wait in ms before retry number `attempt`, where `attempt` is the number of
 * consecutive failures so far (1 after the first failure; a success resets it).
 * `undefined` means "give up": only the google policy does that by itself.
 *
 * `previousDelayMs` is the wait that preceded the failed attempt (finite, >= 0), used by
 * the reference and decorrelated-jitter policies; pass `undefined` when there is none.
 * For the reference policy pass the client's think time before the first failure, then the
 * previous retry wait.
 *
 * `attempt` below 1 means no failure yet: the wait is 0, except for the table policy,
 * which returns its entry 0 as the Go `retryConn` loop does before its first attempt.
 *
 * Pure: the only effect is drawing from `random`. Policies are trusted (the factories
 * validate them), so this stays cheap enough for simulating millions of clients. Each kind's
 * waits are its definition's (src/backoff/policies/<kind>.ts).
 */
export function nextDelay(policy: BackoffPolicy, attempt: number, previousDelayMs: number | undefined, random: Random): number | undefined {
  // An unvalidated policy of no known kind (from JavaScript or JSON) waits nothing before its first
  // attempt and gives up after it, as the switch on kinds did.
  const definition = knownPolicyDefinition(policy.kind);
  if (!(attempt >= 1)) return definition?.waitBeforeFirstAttempt?.(policy, random) ?? 0;
  return definition?.delay(policy, attempt, previousDelayMs, random);
}

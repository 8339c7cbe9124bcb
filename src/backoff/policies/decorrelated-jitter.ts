import { checkBaseAndCap, AWS_DEFAULTS } from "./aws-jitter.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";

/**
 * "Decorrelated jitter", same AWS article:
 * `wait = min(capMs, uniform(baseMs, 3 * previous))`, `previous` being the last wait
 * (`baseMs` for the first retry).
 */
export interface DecorrelatedJitterPolicy {
  readonly kind: "decorrelated-jitter";
  /** Lower bound of every wait, ms, > 0. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

/** AWS's decorrelated jitter draws up to three times the previous wait. */
const DECORRELATED_SPREAD = 3;

const DEFAULTS: DecorrelatedJitterPolicy = Object.freeze({ kind: "decorrelated-jitter", ...AWS_DEFAULTS });

function check(policy: DecorrelatedJitterPolicy): void {
  // With baseMs 0 every wait would be uniform(0, 3 * 0) = 0 forever.
  checkBaseAndCap(policy, { above: 0 });
}

export function decorrelatedJitterPolicy(options: FactoryOptions<DecorrelatedJitterPolicy> = {}): DecorrelatedJitterPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const decorrelatedJitter = definePolicy<DecorrelatedJitterPolicy>({
  defaults: DEFAULTS,
  create: decorrelatedJitterPolicy,
  check,
  delay: (policy, _attempt, previousDelayMs, random) => {
    // Our own waits never exceed capMs; capping a foreign previous wait keeps 3 * previous
    // finite and does not change the result, which is capped anyway.
    const previous = Math.min(previousDelayMs ?? policy.baseMs, policy.capMs);
    // A previous wait below baseMs / 3 would invert the range; the AWS article assumes
    // previous >= baseMs, which its own waits guarantee.
    const high = Math.max(policy.baseMs, DECORRELATED_SPREAD * previous);
    return Math.min(policy.capMs, policy.baseMs + random.uniform() * (high - policy.baseMs));
  },
  // It grows from its own previous retry wait, and starts from its base.
  firstWaitFollowsThinkTime: false,
});

import { checkBaseAndCap, AWS_DEFAULTS } from "./aws-jitter.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { cappedExpression, fittedWaitShape, meanSequence } from "./wait-shape.ts";

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
  libraryName: "decorrelatedJitterPolicy",
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
  exactWaits: (policy) => ({ form: "aws", jitter: "decorrelated", baseMs: policy.baseMs, capMs: policy.capMs }),
  // It grows from its own previous retry wait, and starts from its base.
  firstWaitFollowsThinkTime: false,
  waitShape: (policy, context) => {
    // Each wait is U(base, 3 × the last), capped, the first after base: a mean of (base + 3 × the last mean) ÷ 2.
    let last = policy.baseMs;
    const means = meanSequence(context, Infinity, () => (last = Math.min(policy.capMs, (policy.baseMs + DECORRELATED_SPREAD * last) / 2)));
    return fittedWaitShape(policy.baseMs, means, policy.capMs, "decorrelated", Infinity);
  },
  // Uniform between the base and the ceiling the simulated waits reach after `attempt` draws at their top, base x 3^attempt.
  waitExpression: (policy, attempt) =>
    `${cappedExpression(`${policy.baseMs} + Math.random() * (${policy.baseMs} * ${DECORRELATED_SPREAD} ** ${attempt} - ${policy.baseMs})`, policy.capMs)}`,
  drawsNormal: false,
});

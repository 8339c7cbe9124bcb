import { checkNumber, FRACTION } from "../validate.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { ARTICLE_FACTOR, cappedGrowth, checkGrowth, nonNegative } from "./growth.ts";
import { cappedExpression, waitShape } from "./wait-shape.ts";
import { growingWaits } from "./exact-waits.ts";

/**
 * The pseudo-code of "Exponential Backoff or how not to crash a server" (Andrey Smirnov), in
 * stateless form:
 * `base = min(minDelayMs * factor^n, maxDelayMs)`, `wait = max(0, base + N(0, jitter * base))`.
 * The first retry waits ~271.8 ms with the defaults.
 */
export interface ExponentialPolicy {
  readonly kind: "exponential";
  /** Starting delay, multiplied by `factor` once per failure, ms. Default 100. */
  readonly minDelayMs: number;
  /** Cap on the delay before jitter, ms. Default 300000 (5 min). */
  readonly maxDelayMs: number;
  /** Growth per failure, >= 1. Default ARTICLE_FACTOR (2.71828). */
  readonly factor: number;
  /** Standard deviation of the normal jitter as a fraction of the delay, in [0, 1]. Default 0.1. */
  readonly jitter: number;
}

const DEFAULTS: ExponentialPolicy = Object.freeze({
  kind: "exponential",
  minDelayMs: 100,
  maxDelayMs: 300_000,
  factor: ARTICLE_FACTOR,
  jitter: 0.1,
});

function check(policy: ExponentialPolicy): void {
  checkGrowth(policy);
  checkNumber("jitter", policy.jitter, FRACTION);
}

export function exponentialPolicy(options: FactoryOptions<ExponentialPolicy> = {}): ExponentialPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const exponential = definePolicy<ExponentialPolicy>({
  defaults: DEFAULTS,
  create: exponentialPolicy,
  libraryName: "exponentialPolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => {
    const base = cappedGrowth(policy.minDelayMs, policy.factor, attempt, policy.maxDelayMs);
    return nonNegative(base + random.normal(0, policy.jitter * base));
  },
  // min(min × f^n, max) is min((min × f) × f^(n-1), max); a normal jitter is in no other system's form.
  exactWaits: (policy) =>
    policy.jitter === 0
      ? growingWaits(Math.min(policy.minDelayMs * policy.factor, policy.maxDelayMs), policy.factor, policy.maxDelayMs, 0)
      : undefined,
  firstWaitFollowsThinkTime: false,
  waitShape: (policy) => {
    const first = Math.min(policy.minDelayMs * policy.factor, policy.maxDelayMs);
    return waitShape(first, policy.factor, policy.maxDelayMs, "proportional", first);
  },
  waitExpression: (policy, attempt) =>
    `Math.max(0, ${cappedExpression(`${policy.minDelayMs} * ${policy.factor} ** ${attempt}`, policy.maxDelayMs)} * (1 + ${policy.jitter} * normal()))`,
  drawsNormal: true,
});

import { NON_NEGATIVE } from "../validate.ts";
import { AWS_DEFAULTS, awsCeiling, checkBaseAndCap } from "./aws-jitter.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { cappedExpression, waitShape } from "./wait-shape.ts";

/**
 * "Full jitter", AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015):
 * `wait = uniform(0, min(capMs, baseMs * 2^(n-1)))`.
 */
export interface FullJitterPolicy {
  readonly kind: "full-jitter";
  /** Ms. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

const DEFAULTS: FullJitterPolicy = Object.freeze({ kind: "full-jitter", ...AWS_DEFAULTS });

function check(policy: FullJitterPolicy): void {
  checkBaseAndCap(policy, NON_NEGATIVE);
}

export function fullJitterPolicy(options: FactoryOptions<FullJitterPolicy> = {}): FullJitterPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const fullJitter = definePolicy<FullJitterPolicy>({
  defaults: DEFAULTS,
  create: fullJitterPolicy,
  libraryName: "fullJitterPolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => random.uniform() * awsCeiling(policy, attempt),
  exactWaits: (policy) => ({ form: "aws", jitter: "full", baseMs: policy.baseMs, capMs: policy.capMs }),
  firstWaitFollowsThinkTime: false,
  waitShape: (policy) => waitShape(policy.baseMs, 2, policy.capMs, "full", policy.baseMs / 2),
  waitExpression: (policy, attempt) => `Math.random() * ${cappedExpression(`${policy.baseMs} * 2 ** (${attempt} - 1)`, policy.capMs)}`,
  drawsNormal: false,
});

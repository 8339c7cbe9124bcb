import { NON_NEGATIVE } from "../validate.ts";
import { AWS_DEFAULTS, awsCeiling, checkBaseAndCap } from "./aws-jitter.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { cappedExpression, waitShape } from "./wait-shape.ts";

/**
 * "Equal jitter", same AWS article: with `temp = min(capMs, baseMs * 2^(n-1))`,
 * `wait = temp/2 + uniform(0, temp/2)`.
 */
export interface EqualJitterPolicy {
  readonly kind: "equal-jitter";
  /** Ms. Default 100. */
  readonly baseMs: number;
  /** Ms. Default 300000 (5 min). */
  readonly capMs: number;
}

const DEFAULTS: EqualJitterPolicy = Object.freeze({ kind: "equal-jitter", ...AWS_DEFAULTS });

function check(policy: EqualJitterPolicy): void {
  checkBaseAndCap(policy, NON_NEGATIVE);
}

export function equalJitterPolicy(options: FactoryOptions<EqualJitterPolicy> = {}): EqualJitterPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const equalJitter = definePolicy<EqualJitterPolicy>({
  defaults: DEFAULTS,
  create: equalJitterPolicy,
  libraryName: "equalJitterPolicy",
  check,
  delay: (policy, attempt, _previousDelayMs, random) => {
    const half = awsCeiling(policy, attempt) / 2;
    return half + random.uniform() * half;
  },
  exactWaits: (policy) => ({ form: "aws", jitter: "equal", baseMs: policy.baseMs, capMs: policy.capMs }),
  firstWaitFollowsThinkTime: false,
  waitShape: (policy) => waitShape(policy.baseMs, 2, policy.capMs, "equal", (policy.baseMs * 3) / 4),
  waitExpression: (policy, attempt) =>
    `((t) => t / 2 + (Math.random() * t) / 2)(${cappedExpression(`${policy.baseMs} * 2 ** (${attempt} - 1)`, policy.capMs)})`,
  drawsNormal: false,
});

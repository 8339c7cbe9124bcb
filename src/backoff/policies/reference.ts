import { checkNumber, NON_NEGATIVE } from "../validate.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";
import { ARTICLE_FACTOR, checkGrowth, nonNegative } from "./growth.ts";
import { cappedExpression, goDuration, round3, waitShape, type WaitContext } from "./wait-shape.ts";

/**
 * The reference Go client's `-exponential-backoff` (github.com/smira/exponential-backoff,
 * client.go): `wait = max(0, min(previous * factor, maxDelayMs) + N(0, jitterMs))`,
 * where `previous` is the wait that preceded the failed attempt — for the first failure the
 * client's own think time (10 s on average), so the first retry comes after ~27 s.
 * The jitter is absolute (N(0, 0.1 s)), not proportional.
 */
export interface ReferencePolicy {
  readonly kind: "reference";
  /** Base used when no previous wait is known, ms. Default 100. */
  readonly minDelayMs: number;
  /** Cap on the delay before jitter, ms. Default 300000 (5 min). */
  readonly maxDelayMs: number;
  /** Growth per failure, >= 1. Default ARTICLE_FACTOR (2.71828). */
  readonly factor: number;
  /** Standard deviation of the absolute normal jitter, ms. Default 100. */
  readonly jitterMs: number;
}

const DEFAULTS: ReferencePolicy = Object.freeze({
  kind: "reference",
  minDelayMs: 100,
  maxDelayMs: 300_000,
  factor: ARTICLE_FACTOR,
  jitterMs: 100,
});

function check(policy: ReferencePolicy): void {
  checkGrowth(policy);
  checkNumber("jitterMs", policy.jitterMs, NON_NEGATIVE);
}

export function referencePolicy(options: FactoryOptions<ReferencePolicy> = {}): ReferencePolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const reference = definePolicy<ReferencePolicy>({
  defaults: DEFAULTS,
  create: referencePolicy,
  libraryName: "referencePolicy",
  check,
  delay: (policy, _attempt, previousDelayMs, random) => {
    const base = Math.min((previousDelayMs ?? policy.minDelayMs) * policy.factor, policy.maxDelayMs);
    return nonNegative(base + random.normal(0, policy.jitterMs));
  },
  // The reference client's first wait is e times its think time (above).
  firstWaitFollowsThinkTime: { withoutThinkTime: "minDelayMs" },
  waitShape: (policy, context) => {
    const first = firstWait(policy, context);
    return waitShape(first, policy.factor, policy.maxDelayMs, "absolute", first, Infinity, [
      `the reference backoff's first wait is ${policy.factor} x the user's own think time before the failed attempt ` +
        `(${goDuration(context.thinkTimeMeanMs)} on average); a fixed first wait of ${goDuration(first)} is the closest`,
    ]);
  },
  waitExpression: (policy, attempt, context) =>
    `Math.max(0, ${cappedExpression(`${round3(firstWait(policy, context))} * ${policy.factor} ** (${attempt} - 1)`, policy.maxDelayMs)} + ${policy.jitterMs} * normal())`,
  drawsNormal: true,
});

/** Its first wait for users of a mean think time: a fixed first wait is the closest a system without one can say. */
const firstWait = (policy: ReferencePolicy, context: WaitContext) => Math.min(context.thinkTimeMeanMs * policy.factor, policy.maxDelayMs);

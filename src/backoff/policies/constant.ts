import { checkNumber, NON_NEGATIVE } from "../validate.ts";
import { waitShape } from "./wait-shape.ts";
import { definePolicy, filledPolicy, type FactoryOptions } from "./definition.ts";

/**
 * Fixed interval: every retry waits `delayMs`. The reference client's default strategy
 * (`-simple-backoff-delay`) in Andrey Smirnov's "Exponential Backoff or how not to crash a server"
 * (https://github.com/smira/exponential-backoff).
 */
export interface ConstantPolicy {
  readonly kind: "constant";
  /** Wait before every retry, ms. Default 100. */
  readonly delayMs: number;
}

const DEFAULTS: ConstantPolicy = Object.freeze({ kind: "constant", delayMs: 100 });

function check(policy: ConstantPolicy): void {
  checkNumber("delayMs", policy.delayMs, NON_NEGATIVE);
}

export function constantPolicy(options: FactoryOptions<ConstantPolicy> = {}): ConstantPolicy {
  return filledPolicy(DEFAULTS, options, check);
}

export const constant = definePolicy<ConstantPolicy>({
  defaults: DEFAULTS,
  create: constantPolicy,
  libraryName: "constantPolicy",
  check,
  delay: (policy) => policy.delayMs,
  exactWaits: (policy) => ({ form: "fixed", delayMs: policy.delayMs }),
  firstWaitFollowsThinkTime: false,
  fixedWaitMs: (policy) => policy.delayMs,
  waitShape: (policy) => waitShape(policy.delayMs, 1, policy.delayMs, "none", policy.delayMs),
  waitExpression: (policy) => String(policy.delayMs),
  drawsNormal: false,
});

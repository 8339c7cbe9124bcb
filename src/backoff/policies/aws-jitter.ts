import { checkNumber, checkOrdered, NON_NEGATIVE, type NumberRule } from "../validate.ts";
import { cappedGrowth } from "./growth.ts";

/*
 * What the three formulas of AWS's "Exponential Backoff And Jitter" (full, equal and
 * decorrelated jitter) share: a base and a cap, with the same defaults.
 */

export interface BaseAndCap {
  readonly baseMs: number;
  readonly capMs: number;
}

export const AWS_DEFAULTS: BaseAndCap = { baseMs: 100, capMs: 300_000 };

/** AWS's full and equal jitter double the ceiling per retry. */
const AWS_GROWTH = 2;

/** `min(capMs, baseMs * 2^(attempt-1))`: the ceiling full and equal jitter draw under. */
export function awsCeiling(policy: BaseAndCap, attempt: number): number {
  return cappedGrowth(policy.baseMs, AWS_GROWTH, attempt - 1, policy.capMs);
}

/** The base by the kind's own rule, the cap not negative, the base not above the cap. */
export function checkBaseAndCap(policy: BaseAndCap, baseRule: NumberRule): void {
  checkNumber("baseMs", policy.baseMs, baseRule);
  checkNumber("capMs", policy.capMs, NON_NEGATIVE);
  checkOrdered("baseMs", policy.baseMs, "capMs", policy.capMs);
}

import type { Random } from "../../backoff/random.ts";

/** Transient faults: a request served for a waiting client is answered as an error with probability `rate`. */
export interface ErrorInjection {
  readonly rate: number;
  readonly random: Random;
}

/**
 * Whether this answer is an injected error, at `rateOverride` while an errors fault sets one:
 * draws only when injection is on and the rate is above 0, so that every server model spends
 * its random numbers alike.
 */
export function drawsInjectedError(injection: ErrorInjection | undefined, rateOverride: number | undefined): boolean {
  if (injection === undefined) return false;
  const rate = rateOverride ?? injection.rate;
  return rate > 0 && injection.random.uniform() < rate;
}

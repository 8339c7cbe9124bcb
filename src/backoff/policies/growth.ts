import { AT_LEAST_ONE, checkNumber, checkOrdered, NON_NEGATIVE } from "../validate.ts";

/**
 * e as the article's Go client writes it (`expFactor = 2.71828`); the default growth of the
 * exponential and reference policies.
 */
export const ARTICLE_FACTOR = 2.71828;

/**
 * `min(startMs * growth^exponent, capMs)` for growth >= 1. For large exponents
 * growth^exponent overflows to Infinity; the comparison with the cap absorbs it, and a zero
 * start is answered first because 0 * Infinity is NaN.
 */
export function cappedGrowth(startMs: number, growth: number, exponent: number, capMs: number): number {
  if (startMs === 0) return 0;
  const grown = startMs * growth ** exponent;
  return grown < capMs ? grown : capMs;
}

/** A wait with normal jitter added, clamped at 0. */
export function nonNegative(ms: number): number {
  return ms > 0 ? ms : 0;
}

/** The parameters the article's exponential formula and the reference program's share. */
export function checkGrowth(policy: { minDelayMs: number; maxDelayMs: number; factor: number }): void {
  checkNumber("minDelayMs", policy.minDelayMs, NON_NEGATIVE);
  checkNumber("maxDelayMs", policy.maxDelayMs, NON_NEGATIVE);
  checkOrdered("minDelayMs", policy.minDelayMs, "maxDelayMs", policy.maxDelayMs);
  checkNumber("factor", policy.factor, AT_LEAST_ONE);
}

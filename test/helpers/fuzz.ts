import { expect } from "vitest";

/**
 * The fuzz tests' settings: a few hundred cases in `npm test`, as many as FUZZ_RUNS says for a
 * long run, and the seed FUZZ_SEED names, so that a failure found at any size replays.
 */
export const FUZZ = {
  numRuns: Number(process.env.FUZZ_RUNS ?? 300),
  seed: Number(process.env.FUZZ_SEED ?? 20261127),
} as const;

/** What a user is shown: one line, of printable characters only. */
export function oneLinePrintable(message: string): void {
  expect(message).not.toBe("");
  expect(message).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
}

/*
 * A policy's waits in the words most retry libraries speak: a first wait growing by a
 * multiplier to a cap, with a jitter of some form. Each kind's definition gives its own shape
 * (choose's snippets write the winner's settings from it), and its waits as a JavaScript
 * expression for the systems whose settings are code.
 */

/** The form of a policy's randomness, as the systems that write it tell them apart. */
export type JitterForm = "none" | "full" | "equal" | "decorrelated" | "proportional" | "absolute" | "table" | "additive" | "spread";

/** Waits as first wait × multiplier^(n-1), capped. */
export interface WaitShape {
  /** The first wait: its ceiling for full-jitter kinds, its centre otherwise. */
  readonly firstMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
  readonly jitter: JitterForm;
  /** The "spread" form's width: each wait is drawn within this fraction either side of its centre (gRPC's 0.2: x U(0.8, 1.2)). */
  readonly spread?: number;
  /** Mean of the first wait. */
  readonly meanFirstMs: number;
  /** Attempts the policy itself allows (google gives up after 5 retries). */
  readonly policyAttempts: number;
  /** Where the shape only approximates the policy, and how. */
  readonly notes: readonly string[];
}

/** What besides its parameters shapes a policy's waits where it is used. */
export interface WaitContext {
  /** Attempts per request including the first; Infinity for no limit. */
  readonly maxAttempts: number;
  /** The users' mean think time (the reference policy grows its first wait from it). */
  readonly thinkTimeMeanMs: number;
}

export function waitShape(
  firstMs: number,
  multiplier: number,
  maxMs: number,
  jitter: JitterForm,
  meanFirstMs: number,
  policyAttempts = Infinity,
  notes: readonly string[] = [],
): WaitShape {
  return { firstMs, multiplier, maxMs: Math.max(maxMs, firstMs), jitter, meanFirstMs, policyAttempts, notes };
}

/** Retries whose mean waits a fitted multiplier matches when there is no attempt limit. */
const UNLIMITED_RETRIES_SHOWN = 8;

/** The mean wait before each retry a request makes (at most UNLIMITED_RETRIES_SHOWN without a limit). */
export function meanSequence(context: WaitContext, policyAttempts: number, meanOf: (retry: number) => number): number[] {
  const attempts = Math.min(context.maxAttempts, policyAttempts);
  const retries = Number.isFinite(attempts) ? Math.max(1, attempts - 1) : UNLIMITED_RETRIES_SHOWN;
  return Array.from({ length: retries }, (_, index) => meanOf(index + 1));
}

/**
 * A policy whose mean waits are not first × multiplier^(n-1) (decorrelated jitter's, Google's
 * added second) as the exponential that libraries speak: the multiplier that matches the mean
 * wait at the first retry and at the last one made, and a note of how far the waits between
 * them are off.
 */
export function fittedWaitShape(
  firstMs: number,
  means: readonly number[],
  maxMs: number,
  jitter: JitterForm,
  policyAttempts: number,
): WaitShape {
  const first = means[0]!;
  const last = means.at(-1)!;
  const multiplier = means.length > 1 ? Number(((last / first) ** (1 / (means.length - 1))).toFixed(3)) : 1;
  const fitted = means.map((_, index) => first * multiplier ** index);
  const worst = Math.max(...means.map((mean, index) => Math.abs(fitted[index]! / mean - 1)));
  const notes =
    means.length > 1
      ? [
          `the winner's mean waits (${means.map((mean) => goDuration(mean)).join(", ")}) are not a constant multiple of each other: a ` +
            `multiplier of ${multiplier} matches them at the first and the last retry, within ${(worst * 100).toFixed(1)} % between`,
        ]
      : [];
  return waitShape(firstMs, multiplier, maxMs, jitter, first, policyAttempts, notes);
}

/** Milliseconds in Go notation, for notes. */
export function goDuration(valueMs: number): string {
  if (valueMs >= 1000) return `${Number((valueMs / 1000).toPrecision(6))}s`;
  return `${Number(valueMs.toPrecision(6))}ms`;
}

/** `Math.min(capMs, expression)`: a JavaScript expression capped. */
export const cappedExpression = (expression: string, capMs: number) => `Math.min(${capMs}, ${expression})`;

export const round3 = (value: number) => Number(value.toFixed(3));

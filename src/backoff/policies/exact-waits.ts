/*
 * A policy's waits exactly, in the forms other systems' retry settings speak. check's writers of
 * those settings (src/check/formats/) read this, never the policy's name: a kind says its own form
 * in its definition (`exactWaits`), and one that says none (its waits are in no such form) cannot
 * be written there, which the writers say.
 */

/** The jitters of AWS's "Exponential Backoff And Jitter", over a base doubling to a cap. */
export type AwsJitter = "full" | "equal" | "decorrelated";

export type ExactWaits =
  /** Every retry waits `delayMs`. */
  | { readonly form: "fixed"; readonly delayMs: number }
  /** Retry n waits `min(initialMs × multiplier^(n-1), maxMs) × (1 + U(−spread, spread))`: gRPC's connection backoff. */
  | {
      readonly form: "geometric";
      readonly initialMs: number;
      readonly multiplier: number;
      readonly maxMs: number;
      readonly spread: number;
    }
  /** AWS's capped exponential with one of its jitters, over `baseMs` and `capMs` as that article writes them. */
  | { readonly form: "aws"; readonly jitter: AwsJitter; readonly baseMs: number; readonly capMs: number }
  /** Retry n waits entry min(n, length − 1) of `delaysMs`, drawn in [m/2, 1.5m) (Go's jitter of the table in "Simple backoff"). */
  | { readonly form: "listed"; readonly delaysMs: readonly number[] };

/**
 * Waits that grow by `multiplier` from `initialMs` to `maxMs` with a ±`spread`, as the simplest form
 * that says them: one fixed wait where they never grow (a multiplier of 1 or a first wait at the cap,
 * without spread), else the geometric form.
 */
export function growingWaits(initialMs: number, multiplier: number, maxMs: number, spread: number): ExactWaits {
  if (spread === 0 && (multiplier === 1 || initialMs >= maxMs)) return { form: "fixed", delayMs: Math.min(initialMs, maxMs) };
  return { form: "geometric", initialMs, multiplier, maxMs, spread };
}

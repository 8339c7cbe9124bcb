import type { StepMeasure } from "./fit/step-measure.ts";

/** When the probe calls a service saturated (its flags). */
export interface SaturationRule {
  /** Throughput must grow by more than this fraction over the best step so far, or the service is saturated. */
  readonly minGrowth: number;
  readonly maxP99Ms: number;
  /** Errors ÷ answers above this stops the probe. */
  readonly maxErrors: number;
}

export type StopReason =
  | { readonly kind: "throughput"; readonly growth: number }
  | { readonly kind: "p99"; readonly p99Ms: number }
  | { readonly kind: "errors"; readonly share: number };

/**
 * Whether the steps so far show the service saturated: the last step's errors or p99 passed
 * their bound, or its throughput grew by no more than `minGrowth` over the best before it.
 * The one place the probe decides to stop for the service's sake.
 */
export function saturation(steps: readonly StepMeasure[], rule: SaturationRule): StopReason | undefined {
  const last = steps.at(-1);
  if (last === undefined) return undefined;
  const share = last.errors / last.requests;
  if (share > rule.maxErrors) return { kind: "errors", share };
  if (last.p99Ms > rule.maxP99Ms) return { kind: "p99", p99Ms: last.p99Ms };
  if (steps.length < 2) return undefined;
  const bestBefore = Math.max(...steps.slice(0, -1).map((step) => step.throughputPerSec));
  const growth = last.throughputPerSec / bestBefore - 1;
  return growth <= rule.minGrowth ? { kind: "throughput", growth } : undefined;
}

/**
 * The everyday error rate: errors ÷ answers over the steps before the service saturated
 * (up to and including the one of the highest throughput), where its errors are its own
 * rather than overload's.
 */
export function everydayErrorRate(steps: readonly StepMeasure[]): number {
  if (steps.length === 0) return 0;
  const peak = steps.reduce((best, step, index) => (step.throughputPerSec > steps[best]!.throughputPerSec ? index : best), 0);
  const before = steps.slice(0, peak + 1);
  const requests = before.reduce((sum, step) => sum + step.requests, 0);
  return requests === 0 ? 0 : before.reduce((sum, step) => sum + step.errors, 0) / requests;
}

import { percentile } from "../model/percentile.ts";
import type { StepMeasure } from "./fit/step-measure.ts";

/** A step's answers, as counted: sorted latencies and the window they came in. */
export interface StepCounts {
  readonly concurrency: number;
  readonly latenciesMs: readonly number[];
  readonly errors: number;
  readonly windowMs: number;
}

/** The step's throughput, mean and percentiles (nearest rank); undefined when it has no measuring window. */
export function summarizeStep(counts: StepCounts): StepMeasure | undefined {
  const { latenciesMs, windowMs } = counts;
  if (latenciesMs.length < 2 || windowMs <= 0) return undefined;
  const mean = latenciesMs.reduce((sum, value) => sum + value, 0) / latenciesMs.length;
  return {
    concurrency: counts.concurrency,
    // The window runs from the warm-up's last answer to the step's last: every answer in it but that first edge.
    throughputPerSec: (latenciesMs.length * 1000) / windowMs,
    meanLatencyMs: mean,
    p50Ms: percentile(latenciesMs, 0.5)!,
    p90Ms: percentile(latenciesMs, 0.9)!,
    p99Ms: percentile(latenciesMs, 0.99)!,
    requests: latenciesMs.length,
    errors: counts.errors,
  };
}

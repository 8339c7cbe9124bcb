import type { ServiceDistribution } from "../../model/servers/queue.ts";
import type { StepMeasure } from "./step-measure.ts";

/** The spread of a service's service times, as the queue model's flags state it. */
export interface ServiceSpread {
  readonly dist: ServiceDistribution;
  /** The lognormal's sigma; for constant service times, the queue model's default. */
  readonly sigma: number;
}

/** ln(p90 ÷ p50) of a lognormal is sigma times the normal's 90th percentile, 1.2816. */
const Z_90 = 1.2816;
/**
 * Below this sigma (p90 within about 38 % of p50) the service times count as constant: a
 * loaded machine's scheduling alone spreads a constant service's latencies that much.
 */
const CONSTANT_BELOW_SIGMA = 0.25;
const DEFAULT_SIGMA = 0.5;

/**
 * At the lowest concurrency nothing waits, so the latencies are the service times
 * themselves: their p90 ÷ p50 (steadier than the p99 over a short step) gives a lognormal's sigma, or constant times when it is
 * narrow. (A lognormal with that sigma matches the tail; the queue model keeps the mean.)
 */
export function serviceSpread(steps: readonly StepMeasure[]): ServiceSpread {
  const lowest = steps.reduce((low, step) => (step.concurrency < low.concurrency ? step : low));
  const sigma = lowest.p50Ms > 0 && lowest.p90Ms > lowest.p50Ms ? Math.log(lowest.p90Ms / lowest.p50Ms) / Z_90 : 0;
  if (!(sigma >= CONSTANT_BELOW_SIGMA)) return { dist: "constant", sigma: DEFAULT_SIGMA };
  return { dist: "lognormal", sigma: Number(sigma.toFixed(2)) };
}

/**
 * What one closed-loop step measured: `concurrency` users, each sending its next request as
 * soon as the last one is answered (no think time), so that about `concurrency` requests
 * are in the service at every moment. The fit reads the mean latency and the throughput
 * (Little's law ties them: throughput ≈ concurrency ÷ mean latency); the percentiles are
 * for people, and the lowest step's spread for the service-time distribution.
 */
export interface StepMeasure {
  readonly concurrency: number;
  /** Answers (of any status) per second over the step's measuring window. */
  readonly throughputPerSec: number;
  readonly meanLatencyMs: number;
  /** The percentiles; NaN where a load-test file (probe -from) does not give one. */
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  /** Requests answered in the measuring window. */
  readonly requests: number;
  /** Of them, errors: a status outside 2xx, a refused or reset connection, a timeout. */
  readonly errors: number;
}

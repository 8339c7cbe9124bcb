import { linearConcurrencyForDelay, type LinearLatency, linearDelayMs } from "./servers/linear.ts";

/**
 * The server's latency model, from Andrey Smirnov's "Exponential Backoff or how not to crash a
 * server" and its reference server (https://github.com/smira/exponential-backoff): a fixed delay up to a concurrency limit, exponential above it.
 *
 *   delay(c) = baseDelay                                  when c <= limit
 *   delay(c) = baseDelay * factor ^ ((c - limit) / K)     otherwise
 */
export interface LatencyModel {
  /** The exponential curve; absent means the same (every latency model before others existed). */
  readonly kind?: "exponential";
  /** Service time at or below the limit, in ms. Defaults to 100. */
  readonly baseDelayMs: number;
  /** Requests in service before the delay starts to grow. Defaults to 30. */
  readonly limit: number;
  /** Growth per K requests above the limit. Defaults to 1.05. */
  readonly factor: number;
  /** K, the exponent's divisor (15 in the reference server). */
  readonly exponentDivisor: number;
}

export const DEFAULT_LATENCY_MODEL: LatencyModel = {
  baseDelayMs: 100,
  limit: 30,
  factor: 1.05,
  exponentDivisor: 15,
};

/**
 * A delay shared by every request in service, as a function of how many there are (see
 * ServiceQueue): the exponential curve above, or the linear one (src/model/servers/linear.ts).
 */
export type DelayCurve = LatencyModel | LinearLatency;

/**
 * The modelled delay in ms for `concurrency` requests in service. Unlike the reference
 * server's int64 nanoseconds it never wraps: it grows to Infinity (a request that would
 * outlive any clock), never to a negative or NaN value.
 */
export function modelledDelayMs(model: DelayCurve, concurrency: number): number {
  if (model.kind === "linear") return linearDelayMs(model, concurrency);
  if (concurrency <= model.limit || model.baseDelayMs === 0) return model.baseDelayMs;
  return model.baseDelayMs * model.factor ** ((concurrency - model.limit) / model.exponentDivisor);
}

/**
 * The smallest concurrency whose delay reaches `delayMs` (for instance a client timeout):
 * the model's tipping point. Infinity when the delay never grows.
 */
export function concurrencyForDelay(model: DelayCurve, delayMs: number): number {
  if (model.kind === "linear") return linearConcurrencyForDelay(model, delayMs);
  if (delayMs <= model.baseDelayMs) return 0;
  if (model.factor <= 1 || model.baseDelayMs === 0) return Infinity;
  const exponent = Math.log(delayMs / model.baseDelayMs) / Math.log(model.factor);
  let concurrency = Math.max(model.limit + 1, Math.ceil(model.limit + exponent * model.exponentDivisor));
  // Correct a floating-point off-by-one in either direction.
  while (concurrency > model.limit + 1 && modelledDelayMs(model, concurrency - 1) >= delayMs) concurrency--;
  while (modelledDelayMs(model, concurrency) < delayMs) concurrency++;
  return concurrency;
}

/**
 * The exponential server model's parameters, from Andrey Smirnov's "Exponential Backoff or how
 * not to crash a server" and its reference server (https://github.com/smira/exponential-backoff):
 * a fixed delay up to a concurrency limit, exponential above it (its curve:
 * src/model/servers/kinds/exponential.ts).
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

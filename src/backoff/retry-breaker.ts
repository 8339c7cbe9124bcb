import { RollingCounts } from "./rolling-window.ts";
import { checkNumber } from "./validate.ts";

/**
 * A retry circuit breaker: it never stops a first try, only retries. While the clients'
 * recent failure ratio is past a threshold, a failed request is not retried. Two published
 * designs, named by their source (the windowed one and the cumulative one):
 *
 * - Yandex, "Good Retry, Bad Retry" (2023; github.com/jirfag/simulations, retry_strategies.py
 *   RetryCircuitBreakerStrategy): over the attempts (first tries and retries) that ended in the
 *   last 200 ms, no retry while failures / attempts >= 10 %, nor while the window is empty
 *   ("when all requests are inflight, we don't allow to retry"). Their window is exact; here it
 *   is kept in 20 buckets of 10 ms (RollingCounts), so an attempt counts for 190 to 200 ms.
 * - Marc Brooker, "Fixing retries with token buckets and circuit breakers" (2022;
 *   github.com/mbrooker/simulator_example, retry_sim/retry_strategy.py CircuitBreakerRetryStrategy):
 *   since the client started, failed attempts / requests started > 10 % stops retries. It has
 *   no window: the counts never decay.
 */
export type RetryBreakerConfig =
  | { readonly kind: "yandex-retry"; readonly failureRatio: number; readonly windowMs: number }
  | { readonly kind: "brooker-retry"; readonly failureRatio: number };

export const YANDEX_RETRY_BREAKER: RetryBreakerConfig = Object.freeze({ kind: "yandex-retry", failureRatio: 0.1, windowMs: 200 });
export const BROOKER_RETRY_BREAKER: RetryBreakerConfig = Object.freeze({ kind: "brooker-retry", failureRatio: 0.1 });

export function retryBreaker(config: RetryBreakerConfig): RetryBreakerConfig {
  checkNumber("failureRatio", config.failureRatio, { above: 0, max: 1 });
  if (config.kind === "yandex-retry") checkNumber("windowMs", config.windowMs, { above: 0 });
  return Object.freeze({ ...config });
}

const WINDOW_BUCKETS = 20;
const ATTEMPTS = 0;
const FAILURES = 1;

/** The retry breakers of `instances` independent clients (instance numbers from 0). */
export class RetryBreakers {
  readonly config: RetryBreakerConfig;
  /** Windowed: attempts and failures that ended in the window. */
  private readonly window: RollingCounts | undefined;
  /** Cumulative: requests started and failed attempts, per instance. */
  private readonly requests: Float64Array;
  private readonly failures: Float64Array;

  constructor(config: RetryBreakerConfig = YANDEX_RETRY_BREAKER, instances = 1) {
    this.config = config;
    const windowed = config.kind === "yandex-retry";
    this.window = windowed
      ? new RollingCounts({ windowMs: config.windowMs, buckets: WINDOW_BUCKETS, fields: 2, series: instances })
      : undefined;
    this.requests = new Float64Array(windowed ? 0 : instances);
    this.failures = new Float64Array(windowed ? 0 : instances);
  }

  /** A new request starts (its first try). */
  requestStarted(instance = 0): void {
    if (this.window === undefined) this.requests[instance]!++;
  }

  /** An attempt, first try or retry, ended. */
  attemptEnded(success: boolean, nowMs: number, instance = 0): void {
    if (this.window !== undefined) {
      this.window.add(instance, ATTEMPTS, nowMs, 1);
      if (!success) this.window.add(instance, FAILURES, nowMs, 1);
    } else if (!success) this.failures[instance]!++;
  }

  /** Whether a failed request may be retried now. */
  allowsRetry(nowMs: number, instance = 0): boolean {
    const ratio = this.config.failureRatio;
    if (this.window === undefined) return this.failures[instance]! <= ratio * this.requests[instance]!;
    const attempts = this.window.sum(instance, ATTEMPTS, nowMs);
    return attempts > 0 && this.window.sum(instance, FAILURES, nowMs) < ratio * attempts;
  }
}

import { RollingCounts } from "./rolling-window.ts";
import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * Client-side adaptive throttling, from Google's "Site Reliability Engineering" book,
 * chapter 21 "Handling Overload" (https://sre.google/sre-book/handling-overload/): each
 * client remembers, over the last two minutes, how many requests it attempted and how many
 * the backend accepted, and rejects a new request locally, before it is sent, with
 * probability
 *
 *     max(0, (requests - K * accepts) / (requests + 1))
 *
 * With K = 2 the client sends about twice what the backend accepts: while the backend
 * accepts everything nothing is rejected; when it accepts nothing, almost everything is.
 * Requests rejected locally count as requests (the book counts every request "attempted by
 * the application layer"), so the rejection probability keeps rising while the backend stays
 * down, and they cost the backend nothing. Apache Beam's AdaptiveThrottler implements the same
 * formula.
 */
export interface AdaptiveThrottleConfig {
  /** The book's K, the multiplier on accepts, > 0. Default 2; lower rejects sooner. */
  readonly k: number;
  /** How much history counts, ms. Default 120000 (the book's two minutes). */
  readonly windowMs: number;
  /** Buckets the window is kept in (exact at bucket edges), an integer >= 1. Default 12 (10 s each). */
  readonly buckets: number;
}

export const ADAPTIVE_THROTTLE_DEFAULTS: AdaptiveThrottleConfig = Object.freeze({ k: 2, windowMs: 120_000, buckets: 12 });

export function adaptiveThrottleConfig(options: OptionsOf<AdaptiveThrottleConfig> = {}): AdaptiveThrottleConfig {
  const config = withDefaults(ADAPTIVE_THROTTLE_DEFAULTS, options);
  checkNumber("k", config.k, { above: 0 });
  checkNumber("windowMs", config.windowMs, { above: 0 });
  checkNumber("buckets", config.buckets, { min: 1, integer: true });
  return Object.freeze(config);
}

/** The book's rejection probability for the counts of the window, in [0, 1). */
export function sreRejectProbability(requests: number, accepts: number, k: number): number {
  return Math.max(0, (requests - k * accepts) / (requests + 1));
}

const REQUESTS = 0;
const ACCEPTS = 1;

/** The throttle's state for `instances` independent clients (instance numbers from 0). */
export class AdaptiveThrottle {
  readonly config: AdaptiveThrottleConfig;
  private readonly history: RollingCounts;

  constructor(config: AdaptiveThrottleConfig = ADAPTIVE_THROTTLE_DEFAULTS, instances = 1) {
    this.config = config;
    this.history = new RollingCounts({ windowMs: config.windowMs, buckets: config.buckets, fields: 2, series: instances });
  }

  /** The probability that a request of `instance` is rejected now. */
  rejectProbability(nowMs: number, instance = 0): number {
    return sreRejectProbability(this.history.sum(instance, REQUESTS, nowMs), this.history.sum(instance, ACCEPTS, nowMs), this.config.k);
  }

  /**
   * Decides a new request: `uniform` is a draw from [0, 1). Returns true when it must be
   * rejected locally. Either way it counts as a request.
   */
  reject(nowMs: number, uniform: number, instance = 0): boolean {
    const rejected = uniform < this.rejectProbability(nowMs, instance);
    this.history.add(instance, REQUESTS, nowMs, 1);
    return rejected;
  }

  /** The backend accepted a request (it answered, and not with "overloaded"). */
  accepted(nowMs: number, instance = 0): void {
    this.history.add(instance, ACCEPTS, nowMs, 1);
  }

  /** Requests and accepts of the window ending at `nowMs`. */
  counts(nowMs: number, instance = 0): { requests: number; accepts: number } {
    return { requests: this.history.sum(instance, REQUESTS, nowMs), accepts: this.history.sum(instance, ACCEPTS, nowMs) };
  }
}

import { RollingCounts } from "./rolling-window.ts";
import { checkNumber, type OptionsOf, withDefaults } from "./validate.ts";

/**
 * A circuit breaker as cockatiel (github.com/connor4312/cockatiel, CircuitBreakerPolicy,
 * ConsecutiveBreaker, SamplingBreaker) and Polly (https://www.pollydocs.org/strategies/circuit-breaker)
 * have it. Closed, calls go through and their outcomes are counted; when the trip rule says
 * so it opens, and calls fail at once, locally, without reaching the server. After the break
 * duration the next call is let through as a probe (half-open) while the others are still
 * refused; if the probe succeeds the breaker closes and forgets its counts, if it fails the
 * breaker opens for another break duration.
 *
 * Two trip rules:
 * - `consecutive`: open after `failureThreshold` failures in a row (cockatiel's
 *   ConsecutiveBreaker; its README's example uses 5);
 * - `sampling`: open when, over the last `samplingMs`, at least `minimumThroughput` calls
 *   were counted and failures / calls >= `failureRatio` (Polly v8's CircuitBreakerStrategyOptions,
 *   whose defaults are 0.1, 100 calls, 30 s, and a 5 s break; its rolling window is 10 buckets,
 *   exact at bucket edges, as here).
 * The break duration defaults to Polly's 5 s for both (cockatiel has no default `halfOpenAfter`).
 * The transition to half-open happens lazily, at the first call after the break, as in both.
 */
export type CircuitBreakerConfig =
  | { readonly kind: "consecutive"; readonly failureThreshold: number; readonly breakMs: number }
  | {
      readonly kind: "sampling";
      readonly failureRatio: number;
      readonly minimumThroughput: number;
      readonly samplingMs: number;
      readonly breakMs: number;
    };

type ConsecutiveConfig = Extract<CircuitBreakerConfig, { kind: "consecutive" }>;
type SamplingConfig = Extract<CircuitBreakerConfig, { kind: "sampling" }>;

export const CIRCUIT_BREAKER_DEFAULTS: { readonly consecutive: ConsecutiveConfig; readonly sampling: SamplingConfig } = Object.freeze({
  consecutive: Object.freeze({ kind: "consecutive", failureThreshold: 5, breakMs: 5_000 }),
  sampling: Object.freeze({ kind: "sampling", failureRatio: 0.1, minimumThroughput: 100, samplingMs: 30_000, breakMs: 5_000 }),
});

type ConsecutiveOptions = OptionsOf<Omit<ConsecutiveConfig, "kind">>;
type SamplingOptions = OptionsOf<Omit<SamplingConfig, "kind">>;

export function consecutiveBreaker(options: ConsecutiveOptions = {}): CircuitBreakerConfig {
  const config = withDefaults<ConsecutiveConfig>(CIRCUIT_BREAKER_DEFAULTS.consecutive, options);
  checkNumber("failureThreshold", config.failureThreshold, { min: 1, integer: true });
  checkNumber("breakMs", config.breakMs, { min: 0 });
  return Object.freeze({ ...config });
}

export function samplingBreaker(options: SamplingOptions = {}): CircuitBreakerConfig {
  const config = withDefaults<SamplingConfig>(CIRCUIT_BREAKER_DEFAULTS.sampling, options);
  checkNumber("failureRatio", config.failureRatio, { above: 0, max: 1 });
  checkNumber("minimumThroughput", config.minimumThroughput, { min: 1, integer: true });
  checkNumber("samplingMs", config.samplingMs, { above: 0 });
  checkNumber("breakMs", config.breakMs, { min: 0 });
  return Object.freeze({ ...config });
}

export type BreakerState = "closed" | "open" | "half-open";

/** What a breaker says to a call: go (closed), go as the probe (half-open), or fail at once. */
export const BREAKER_PASS = 0;
export const BREAKER_PROBE = 1;
export const BREAKER_REJECT = 2;
export type BreakerVerdict = typeof BREAKER_PASS | typeof BREAKER_PROBE | typeof BREAKER_REJECT;

const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;
const STATE_NAMES: readonly BreakerState[] = ["closed", "open", "half-open"];

/** Polly's rolling health metrics keep 10 windows. */
const SAMPLING_BUCKETS = 10;
const CALLS = 0;
const FAILURES = 1;

/** The breakers of `instances` independent clients (instance numbers from 0), all closed at first. */
export class CircuitBreakers {
  readonly config: CircuitBreakerConfig;
  private readonly state: Uint8Array;
  private readonly openedAtMs: Float64Array;
  private readonly consecutive: Float64Array | undefined;
  private readonly sampled: RollingCounts | undefined;

  constructor(config: CircuitBreakerConfig = CIRCUIT_BREAKER_DEFAULTS.consecutive, instances = 1) {
    this.config = config;
    this.state = new Uint8Array(instances);
    this.openedAtMs = new Float64Array(instances);
    if (config.kind === "consecutive") {
      this.consecutive = new Float64Array(instances);
      this.sampled = undefined;
    } else {
      this.consecutive = undefined;
      this.sampled = new RollingCounts({ windowMs: config.samplingMs, buckets: SAMPLING_BUCKETS, fields: 2, series: instances });
    }
  }

  /** The state a call would find now (an open breaker whose break is over counts as half-open). */
  stateAt(nowMs: number, instance = 0): BreakerState {
    const state = this.state[instance]!;
    if (state === OPEN && nowMs - this.openedAtMs[instance]! >= this.config.breakMs) return "half-open";
    return STATE_NAMES[state]!;
  }

  /**
   * A call wants to go through. BREAKER_PASS: closed, go. BREAKER_PROBE: the break is over and this call is
   * the one probe (report its outcome with `probe` true). BREAKER_REJECT: fail it at once.
   */
  admit(nowMs: number, instance = 0): BreakerVerdict {
    const state = this.state[instance]!;
    if (state === CLOSED) return BREAKER_PASS;
    if (state === OPEN && nowMs - this.openedAtMs[instance]! >= this.config.breakMs) {
      this.state[instance] = HALF_OPEN;
      return BREAKER_PROBE;
    }
    return BREAKER_REJECT;
  }

  /**
   * The outcome of a call that was let through. A probe's outcome closes or reopens the
   * breaker; an outcome that arrives while the breaker is open or half-open from a call let
   * through before it opened is not counted (as in cockatiel and Polly).
   */
  record(success: boolean, probe: boolean, nowMs: number, instance = 0): void {
    if (probe) {
      if (success) this.close(instance);
      else this.open(nowMs, instance);
      return;
    }
    if (this.state[instance] !== CLOSED) return;
    if (this.consecutive !== undefined) {
      if (success) this.consecutive[instance] = 0;
      else if (++this.consecutive[instance]! >= (this.config as ConsecutiveConfig).failureThreshold) this.open(nowMs, instance);
      return;
    }
    const sampled = this.sampled!;
    const config = this.config as SamplingConfig;
    sampled.add(instance, CALLS, nowMs, 1);
    if (success) return;
    sampled.add(instance, FAILURES, nowMs, 1);
    const calls = sampled.sum(instance, CALLS, nowMs);
    if (calls >= config.minimumThroughput && sampled.sum(instance, FAILURES, nowMs) >= config.failureRatio * calls)
      this.open(nowMs, instance);
  }

  /**
   * The probe was let through and then abandoned by its caller before its outcome (a cancelled
   * call, a hedge whose sibling answered): the breaker is open again with its break over, so the
   * next call is the probe. Without this it would stay half-open, refusing every call, for good.
   */
  probeAbandoned(nowMs: number, instance = 0): void {
    if (this.state[instance] !== HALF_OPEN) return;
    this.open(nowMs - this.config.breakMs, instance);
  }

  private open(nowMs: number, instance: number): void {
    this.state[instance] = OPEN;
    this.openedAtMs[instance] = nowMs;
  }

  private close(instance: number): void {
    this.state[instance] = CLOSED;
    if (this.consecutive !== undefined) this.consecutive[instance] = 0;
    this.sampled?.clear(instance);
  }
}

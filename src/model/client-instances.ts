import { AdaptiveThrottle, type AdaptiveThrottleConfig } from "../backoff/adaptive-throttle.ts";
import { AwsQuotaState, type AwsRetryQuota } from "../backoff/aws-retry-quota.ts";
import {
  budgetAfterFailure,
  budgetAfterSuccess,
  budgetAllowsRetry,
  initialBudgetState,
  type RetryBudget,
  type RetryBudgetState,
} from "../backoff/budget.ts";
import { type CircuitBreakerConfig, CircuitBreakers, BREAKER_PROBE, BREAKER_REJECT } from "../backoff/circuit-breaker.ts";
import { envoyAllowsRetry, type EnvoyRetryBudget } from "../backoff/envoy-budget.ts";
import { FinagleBudgetState, type FinagleRetryBudget } from "../backoff/finagle-budget.ts";
import type { Random } from "../backoff/random.ts";
import { type RetryBreakerConfig, RetryBreakers } from "../backoff/retry-breaker.ts";
import { type RetryTokenBucket, RetryTokenBuckets } from "../backoff/retry-token-bucket.ts";
import type { AttemptOutcome } from "./outcome.ts";

/** A retry budget of one of the published designs, with its parameters. */
export type RetryBudgetConfig =
  | { readonly kind: "grpc"; readonly budget: RetryBudget }
  | { readonly kind: "envoy"; readonly budget: EnvoyRetryBudget }
  | { readonly kind: "finagle"; readonly budget: FinagleRetryBudget }
  | { readonly kind: "aws"; readonly budget: AwsRetryQuota }
  | { readonly kind: "yandex" | "brooker"; readonly budget: RetryTokenBucket };

export type RetryBudgetKind = RetryBudgetConfig["kind"];

/**
 * The fleet-level protections a herd runs, and where their state lives. Users are spread
 * evenly over `instances` client instances (user i belongs to instance i mod instances);
 * each instance has its own budget, throttle and breaker, as a process has its own client
 * library. One instance for the whole herd is one service calling its backend; one per user
 * is a fleet of phones.
 */
export interface FleetConfig {
  /** Client instances; 0 means one per user. */
  readonly instances: number;
  readonly budget: RetryBudgetConfig | undefined;
  readonly throttle: AdaptiveThrottleConfig | undefined;
  /** A circuit breaker on every call, or a retry breaker that only stops retries. */
  readonly breaker: CircuitBreakerConfig | RetryBreakerConfig | undefined;
}

export const NO_FLEET_PROTECTION: FleetConfig = Object.freeze({ instances: 0, budget: undefined, throttle: undefined, breaker: undefined });

/** Whether a fleet config turns anything on. */
export function hasProtection(config: FleetConfig | undefined): config is FleetConfig {
  return config !== undefined && (config.budget !== undefined || config.throttle !== undefined || config.breaker !== undefined);
}

/** What `admit` says about an attempt about to be sent. */
export const ADMITTED = 0;
export const THROTTLED = 1;
export const REJECTED = 2;
export type Admission = typeof ADMITTED | typeof THROTTLED | typeof REJECTED;

/** What `admitCopy` says besides `admit`'s: the copy goes as the breaker's probe, or the budget withholds a hedge. */
export const ADMITTED_PROBE = 3;
export const WITHHELD = 4;
export type CopyAdmission = Admission | typeof ADMITTED_PROBE | typeof WITHHELD;

/**
 * Why a hedging client (-hedge-delay) cannot have these protections; undefined when it can. The
 * combinations that published designs define: gRPC's retry budget, which A6 applies to hedged
 * RPCs ("retryThrottling"); a circuit breaker, each hedged attempt going through it as Polly v8's
 * and failsafe-go's pipelines compose them (hedging outside, the breaker inside); the adaptive
 * throttle, which counts every attempt sent. The other budgets and the retry breakers keep state
 * per retry of one attempt at a time and define nothing for copies in flight together.
 */
export function hedgingProblem(config: FleetConfig): string | undefined {
  if (config.budget !== undefined && config.budget.kind !== "grpc") return `-budget ${config.budget.kind}`;
  const breaker = config.breaker;
  if (breaker !== undefined && (breaker.kind === "yandex-retry" || breaker.kind === "brooker-retry")) return `-breaker ${breaker.kind}`;
  return undefined;
}

/** Per-user marks of what the attempt in flight holds. */
const HOLDS_PROBE = 1;
const HOLDS_ENVOY_RETRY = 2;
const HOLDS_RETRY = 4;

/**
 * The protections' state for every instance of a herd, and the herd's hooks into it. Time
 * is passed in; nothing is allocated per event except by the gRPC budget's immutable states.
 * Users are numbered from 0 as in the herd.
 */
export class ClientInstances {
  readonly count: number;
  private readonly grpc: RetryBudget | undefined;
  private readonly grpcStates: RetryBudgetState[];
  private readonly envoy: EnvoyRetryBudget | undefined;
  /** Per instance: attempts in flight, and retries decided and not yet finished (Envoy's two counts). */
  private readonly activeRequests: Float64Array;
  private readonly activeRetries: Float64Array;
  private readonly finagle: FinagleBudgetState | undefined;
  private readonly aws: AwsQuotaState | undefined;
  /** Per user: what the last retry of its current request cost (AWS), 0 for none. */
  private readonly awsRetryCost: Float64Array;
  private readonly throttle: AdaptiveThrottle | undefined;
  private readonly breakers: CircuitBreakers | undefined;
  private readonly tokenBuckets: RetryTokenBuckets | undefined;
  private readonly retryBreakers: RetryBreakers | undefined;
  /** Per user: HOLDS_* marks. */
  private readonly holds: Uint8Array;
  /** Per user: its instance, user mod count unless assigned (an open-loop chain takes its arrival's). */
  private readonly instanceOfUser: Uint32Array;

  constructor(config: FleetConfig, users: number) {
    const count = config.instances === 0 ? users : Math.min(config.instances, users);
    this.count = count;
    const budget = config.budget;
    this.grpc = budget?.kind === "grpc" ? budget.budget : undefined;
    this.grpcStates = this.grpc === undefined ? [] : Array.from({ length: count }, () => initialBudgetState(this.grpc!));
    this.envoy = budget?.kind === "envoy" ? budget.budget : undefined;
    this.activeRequests = new Float64Array(this.envoy === undefined ? 0 : count);
    this.activeRetries = new Float64Array(this.envoy === undefined ? 0 : count);
    this.finagle = budget?.kind === "finagle" ? new FinagleBudgetState(budget.budget, count) : undefined;
    this.aws = budget?.kind === "aws" ? new AwsQuotaState(budget.budget, count) : undefined;
    this.awsRetryCost = new Float64Array(this.aws === undefined ? 0 : users);
    this.throttle = config.throttle === undefined ? undefined : new AdaptiveThrottle(config.throttle, count);
    this.tokenBuckets = budget?.kind === "yandex" || budget?.kind === "brooker" ? new RetryTokenBuckets(budget.budget, count) : undefined;
    const breaker = config.breaker;
    const retryBreaker = breaker?.kind === "yandex-retry" || breaker?.kind === "brooker-retry";
    this.breakers = breaker === undefined || retryBreaker ? undefined : new CircuitBreakers(breaker, count);
    this.retryBreakers = retryBreaker ? new RetryBreakers(breaker, count) : undefined;
    this.holds = new Uint8Array(users);
    this.instanceOfUser = Uint32Array.from({ length: users }, (_, user) => user % count);
  }

  /** The instance a user belongs to. */
  instanceOf(user: number): number {
    return this.instanceOfUser[user]!;
  }

  /**
   * Puts a user (an open-loop chain slot) in `instance` mod count from its next attempt on.
   * Slots are reused, so only as many exist as requests alive at once; arrivals, not slots,
   * are spread over the instances, or a fleet of K instances would use only the first few.
   */
  assign(user: number, instance: number): void {
    this.instanceOfUser[user] = instance % this.count;
  }

  /**
   * An attempt is about to be sent. Every new request deposits into a Finagle budget; then
   * the throttle decides (counting the request either way), then the breaker. A throttled or
   * rejected attempt is never sent and must be reported with `refused`.
   */
  admit(user: number, isRetry: boolean, nowMs: number, random: Random): Admission {
    const instance = this.instanceOfUser[user]!;
    if (isRetry) this.holds[user]! |= HOLDS_RETRY;
    else {
      this.finagle?.deposit(nowMs, instance);
      this.tokenBuckets?.requestStarted(instance);
      this.retryBreakers?.requestStarted(instance);
    }
    if (this.throttle !== undefined && this.throttle.reject(nowMs, random.uniform(), instance)) return THROTTLED;
    if (this.breakers !== undefined) {
      const verdict = this.breakers.admit(nowMs, instance);
      if (verdict === BREAKER_REJECT) return REJECTED;
      if (verdict === BREAKER_PROBE) this.holds[user]! |= HOLDS_PROBE;
    }
    if (this.envoy !== undefined) this.activeRequests[instance]!++;
    return ADMITTED;
  }

  /**
   * One copy of a hedged request (src/backoff/hedge.ts), with the protections hedgingProblem
   * allows. The first copy is the request, admitted as `admit` admits one. A later copy, a
   * hedge, is withheld while gRPC's budget would refuse a retry (A6: "subsequent hedged RPCs will
   * only be sent if token_count is greater than the threshold"); then the throttle and the
   * breaker decide as for any attempt. Copies overlap, so what a copy holds (the probe) is the
   * copy's own, not the user's: report its end with `copyEnded`, its cancellation with `copyCancelled`.
   */
  admitCopy(user: number, first: boolean, nowMs: number, random: Random): CopyAdmission {
    const instance = this.instanceOfUser[user]!;
    if (!first && this.grpc !== undefined && !budgetAllowsRetry(this.grpc, this.grpcStates[instance]!)) return WITHHELD;
    if (this.throttle !== undefined && this.throttle.reject(nowMs, random.uniform(), instance)) return THROTTLED;
    if (this.breakers === undefined) return ADMITTED;
    const verdict = this.breakers.admit(nowMs, instance);
    return verdict === BREAKER_REJECT ? REJECTED : verdict === BREAKER_PROBE ? ADMITTED_PROBE : ADMITTED;
  }

  /** A copy admitted by admitCopy ended with `outcome`: every copy counts, as every RPC does in A6's token count. */
  copyEnded(user: number, probe: boolean, outcome: AttemptOutcome, nowMs: number): void {
    const instance = this.instanceOfUser[user]!;
    const ok = outcome === "ok";
    this.breakers?.record(ok, probe, nowMs, instance);
    if (ok) this.throttle?.accepted(nowMs, instance);
    if (this.grpc !== undefined) {
      const state = this.grpcStates[instance]!;
      this.grpcStates[instance] = ok ? budgetAfterSuccess(this.grpc, state) : budgetAfterFailure(this.grpc, state);
    }
  }

  /** A copy admitted by admitCopy was cancelled (its request ended with another copy, or stopped): uncounted; a probe is given back. */
  copyCancelled(user: number, probe: boolean, nowMs: number): void {
    if (probe) this.breakers?.probeAbandoned(nowMs, this.instanceOfUser[user]!);
  }

  /** An admitted attempt ended with `outcome` (not called for attempts aborted by a stop). */
  attemptEnded(user: number, outcome: AttemptOutcome, nowMs: number): void {
    const instance = this.instanceOfUser[user]!;
    const ok = outcome === "ok";
    const holds = this.holds[user]!;
    if (this.envoy !== undefined) {
      this.activeRequests[instance]!--;
      if ((holds & HOLDS_ENVOY_RETRY) !== 0) this.activeRetries[instance]!--;
    }
    this.breakers?.record(ok, (holds & HOLDS_PROBE) !== 0, nowMs, instance);
    this.retryBreakers?.attemptEnded(ok, nowMs, instance);
    if (ok) this.tokenBuckets?.succeeded((holds & HOLDS_RETRY) !== 0, instance);
    this.holds[user] = 0;
    if (ok) this.throttle?.accepted(nowMs, instance);
    if (this.grpc !== undefined) {
      const state = this.grpcStates[instance]!;
      this.grpcStates[instance] = ok ? budgetAfterSuccess(this.grpc, state) : budgetAfterFailure(this.grpc, state);
    }
    if (this.aws !== undefined && ok) {
      this.aws.recordSuccess(this.awsRetryCost[user]!, instance);
      this.awsRetryCost[user] = 0;
    }
  }

  /** An attempt was throttled or rejected locally: it gives back the retry place it held. */
  refused(user: number): void {
    if (this.envoy !== undefined && (this.holds[user]! & HOLDS_ENVOY_RETRY) !== 0) this.activeRetries[this.instanceOfUser[user]!]!--;
    this.holds[user] = 0;
  }

  /**
   * Whether the budget lets a user retry after a failed attempt; an allowed retry takes its
   * share (a token withdrawal, a quota cost, a place among the retries in progress).
   */
  allowRetry(user: number, outcome: AttemptOutcome, nowMs: number): boolean {
    const instance = this.instanceOfUser[user]!;
    if (this.retryBreakers !== undefined && !this.retryBreakers.allowsRetry(nowMs, instance)) return false;
    if (this.tokenBuckets !== undefined) return this.tokenBuckets.tryTakeRetry(instance);
    if (this.grpc !== undefined) return budgetAllowsRetry(this.grpc, this.grpcStates[instance]!);
    if (this.envoy !== undefined) {
      if (!envoyAllowsRetry(this.envoy, this.activeRequests[instance]!, this.activeRetries[instance]!)) return false;
      this.activeRetries[instance]!++;
      this.holds[user]! |= HOLDS_ENVOY_RETRY;
      return true;
    }
    if (this.finagle !== undefined) return this.finagle.tryWithdraw(nowMs, instance);
    if (this.aws !== undefined) {
      const cost = this.aws.tryAcquire(outcome === "timedout", instance);
      this.awsRetryCost[user] = cost;
      return cost > 0;
    }
    return true;
  }

  /**
   * An admitted attempt was aborted by its caller, which no longer wants it (a middle tier's
   * cancelled call): it ends uncounted by the breaker and the budgets, giving back what it held.
   */
  attemptAborted(user: number, nowMs: number): void {
    if (this.envoy !== undefined) this.activeRequests[this.instanceOfUser[user]!]!--;
    if ((this.holds[user]! & HOLDS_PROBE) !== 0) this.breakers?.probeAbandoned(nowMs, this.instanceOfUser[user]!);
    this.refused(user);
  }

  /** A user gave its request up: nothing of it is refunded later. */
  requestAbandoned(user: number): void {
    if (this.aws !== undefined) this.awsRetryCost[user] = 0;
  }

  /** An instance's gRPC retry-budget state, when that is the budget. */
  grpcBudgetState(instance: number): RetryBudgetState | undefined {
    return this.grpc === undefined ? undefined : this.grpcStates[instance];
  }

  /** For tests and reports: an instance's budget level, in the budget's own unit. */
  budgetLevel(instance: number, nowMs: number): number | undefined {
    if (this.grpc !== undefined) return this.grpcStates[instance]!.tokens;
    if (this.envoy !== undefined) return this.activeRetries[instance]!;
    if (this.finagle !== undefined) return this.finagle.retriesLeft(nowMs, instance);
    if (this.aws !== undefined) return this.aws.tokens(instance);
    if (this.tokenBuckets !== undefined) return this.tokenBuckets.tokens(instance);
    return undefined;
  }
}

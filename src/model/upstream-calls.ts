import { policyDefinition } from "../backoff/policies.ts";
import type { Random } from "../backoff/random.ts";
import type { Clock } from "../clock/clock.ts";
import { AttemptCycle, type AttemptContext, type HerdObserver, type Transport } from "./attempt.ts";
import { ClientInstances, hasProtection } from "./client-instances.ts";
import { decideAfterAttempt, firstWait, honorServerWait, type RetryConfig, type UserState } from "./client-loop.ts";
import type { AttemptOutcome, AttemptResult } from "./outcome.ts";
import type { ServiceTicket } from "./servers/server-model.ts";
import type { UpstreamCallEnd, UpstreamCaller } from "./servers/upstream-pool.ts";

/**
 * A sink (an attempt cycle) that carries a deadline down from the request it serves: a
 * transport that propagates deadlines sends the earlier of it and the attempt's own.
 * Infinity for none. In the transport's terms (epoch ms for HTTP).
 */
export interface DeadlineCarrier {
  readonly carriedDeadline: number;
}

/** Where a middle tier's calls report: its UpstreamPool (src/model/servers/upstream-pool.ts). */
export interface UpstreamReports {
  callEnded(ticket: ServiceTicket, end: UpstreamCallEnd): void;
  attemptSent(isRetry: boolean): void;
  attemptEnded(outcome: AttemptOutcome): void;
}

export interface UpstreamCallOptions {
  /** The per-attempt timeout of the tier's own policy, ms. */
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
  /**
   * What each request calls, one leg per entry (a fan-out of k lists k entries, the same
   * transport k times for k calls to one upstream): the request's call succeeds when every
   * leg has, and fails at the first leg that fails for good (the others are cancelled).
   */
  readonly targets: readonly Transport[];
  /** The most requests calling at once (the pool's memory bounds it): it sizes the budget's per-call state. */
  readonly maxCalls: number;
  /** The deadline a request brought, in the transports' terms, to carry down; undefined for none. */
  readonly carriedDeadline?: (context: unknown) => number | undefined;
}

/** A request's call: its legs still running. */
class Call {
  readonly ticket: ServiceTicket;
  readonly legs: Leg[] = [];
  pending = 0;

  constructor(ticket: ServiceTicket) {
    this.ticket = ticket;
  }
}

/**
 * One leg of a request's upstream call and its retries, on the attempt cycle the client's
 * users and open-loop arrivals have (src/model/attempt.ts): the tier's own policy decides
 * each retry, its budget and breaker may refuse it. A deadline-aware tier's request carries
 * its deadline (`deadlineAt`): no attempt starts at or after it.
 */
class Leg extends AttemptCycle implements UserState, DeadlineCarrier {
  failures = 0;
  lastWaitMs = 0;
  protected startedAt = 0;
  protected plannedAt = 0;
  call: Call | undefined = undefined;
  deadlineAt = Infinity;
  /** The deadline sent upstream with each attempt, with the tier's own (see DeadlineCarrier), Infinity for none. */
  carriedDeadline = Infinity;
  /** An attempt is out (admitted and not yet ended): cancelling it gives back what it holds. */
  private attemptOut = false;
  private readonly calls: UpstreamCalls;
  /** Which of the call's targets this leg calls. */
  readonly target: number;

  constructor(calls: UpstreamCalls, context: AttemptContext, index: number, target: number) {
    super(context, index);
    this.calls = calls;
    this.target = target;
  }

  protected get random(): Random {
    return this.calls.random;
  }

  /** The leg's first attempt (it belongs to a call already). */
  begin(deadlineAt: number, carriedDeadline: number): void {
    const config = this.context.options.retry;
    this.deadlineAt = deadlineAt;
    this.carriedDeadline = carriedDeadline;
    this.failures = 0;
    this.lastWaitMs = 0;
    // As an open-loop arrival: a policy whose first wait follows the think time grows from one the leg draws.
    if (policyDefinition(config.backoff.kind).firstWaitFollowsThinkTime) firstWait(config, this, this.calls.random);
    this.isRetry = false;
    this.plannedAt = this.context.clock.now();
    this.send();
  }

  protected override send(): void {
    if (this.context.clock.now() >= this.deadlineAt) {
      this.calls.legEnded(this, "expired");
      return;
    }
    const inFlight = this.context.inFlight;
    super.send();
    // Not out if refused locally, or answered before send returned.
    this.attemptOut = this.context.inFlight > inFlight;
  }

  override done(result: AttemptResult): void {
    this.attemptOut = false;
    super.done(result);
  }

  override notSent(): void {
    this.attemptOut = false;
    super.notSent();
  }

  protected decide(outcome: AttemptOutcome, result: AttemptResult | undefined, minWaitMs: number): void {
    const retry = this.context.options.retry;
    const decision = decideAfterAttempt(retry, this, outcome, this.calls.random, this.gate);
    if (decision !== "retry") {
      if (decision === "give-up") this.gaveUp();
      this.calls.legEnded(this, outcome === "ok" ? "ok" : "failed");
      return;
    }
    if (result !== undefined) honorServerWait(retry, this, result);
    this.isRetry = true;
    this.armRetry(this.lastWaitMs, minWaitMs);
  }

  /** The call is no longer wanted: its wait or its attempt stops, and what it held in the budget is given back. */
  cancel(): void {
    const fleet = this.context.fleet;
    const wasOut = this.attemptOut;
    this.attemptOut = false;
    this.stop();
    if (fleet === undefined) return;
    if (wasOut) fleet.attemptAborted(this.index, this.context.clock.now());
    else fleet.refused(this.index);
    fleet.requestAbandoned(this.index);
  }
}

/**
 * A middle tier's upstream calls: what an UpstreamPool tells to start, made with the tier's
 * own retry policy over the shared attempt lifecycle, through any transport (undici for the
 * real server, a modelled network for the simulator). The tier is one client instance: its
 * budget, throttle and breaker are shared by all its calls.
 */
export class UpstreamCalls implements UpstreamCaller {
  readonly random: Random;
  private readonly options: UpstreamCallOptions;
  /** One attempt context per target, each with its own idle legs. */
  private readonly contexts: AttemptContext[];
  private readonly idle: Leg[][];
  private legsMade = 0;
  private readonly calls = new Map<ServiceTicket, Call>();
  private reports: UpstreamReports | undefined = undefined;

  constructor(clock: Clock, random: Random, options: UpstreamCallOptions) {
    this.random = random;
    this.options = options;
    const slots = options.maxCalls * options.targets.length;
    const fleetConfig = options.retry.fleet;
    const fleet = hasProtection(fleetConfig) ? new ClientInstances({ ...fleetConfig, instances: 1 }, slots) : undefined;
    const observer: HerdObserver = {
      attemptStarted: (isRetry) => this.reports?.attemptSent(isRetry),
      attemptNotSent: () => {},
      attemptEnded: (result) => this.reports?.attemptEnded(result.outcome),
      attemptRefused: (refusal) => this.reports?.attemptEnded(refusal),
      gaveUp: () => {},
    };
    this.contexts = options.targets.map((transport) => ({
      clock,
      transport,
      observer,
      options: { timeoutMs: options.timeoutMs, retry: options.retry },
      fleet,
      inFlight: 0,
      stopped: false,
      stopAtMs: Infinity,
    }));
    this.idle = options.targets.map(() => []);
  }

  /** Where calls report their ends and attempts: the pool, once made (it takes these calls as its caller). */
  reportTo(reports: UpstreamReports): void {
    this.reports = reports;
  }

  /** Attempts in flight now, over every target. */
  get inFlight(): number {
    return this.contexts.reduce((sum, context) => sum + context.inFlight, 0);
  }

  startCall(ticket: ServiceTicket, context: unknown, deadlineAt: number): void {
    const call = new Call(ticket);
    this.calls.set(ticket, call);
    const carried = context === undefined ? undefined : this.options.carriedDeadline?.(context);
    for (let target = 0; target < this.contexts.length; target++) call.legs.push(this.takeLeg(target, call));
    call.pending = call.legs.length;
    // A leg that fails at once (a local refusal) cancels the legs after it before they begin.
    for (const leg of call.legs) if (leg.call === call) leg.begin(deadlineAt, carried ?? Infinity);
  }

  cancelCall(ticket: ServiceTicket): void {
    const call = this.calls.get(ticket);
    if (call === undefined) return;
    this.calls.delete(ticket);
    this.release(call);
  }

  /** A leg is done: the call goes on, succeeds with its last leg, or fails (or expires) with this one. */
  legEnded(leg: Leg, end: UpstreamCallEnd): void {
    const call = leg.call;
    if (call === undefined) return;
    this.free(leg);
    if (end === "ok" && --call.pending > 0) return;
    this.calls.delete(call.ticket);
    if (end !== "ok") this.release(call);
    this.reports?.callEnded(call.ticket, end);
  }

  private takeLeg(target: number, call: Call): Leg {
    const leg = this.idle[target]!.pop() ?? new Leg(this, this.contexts[target]!, this.legsMade++, target);
    leg.call = call;
    return leg;
  }

  /** Cancels the legs of a call still running. */
  private release(call: Call): void {
    for (const leg of call.legs) {
      if (leg.call !== call) continue;
      leg.cancel();
      this.free(leg);
    }
  }

  private free(leg: Leg): void {
    leg.call = undefined;
    this.idle[leg.target]!.push(leg);
  }
}

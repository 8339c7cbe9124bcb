import { policyDefinition } from "../backoff/policies.ts";
import type { Random } from "../backoff/random.ts";
import type { Clock, TimerOwner } from "../clock/clock.ts";
import { AttemptCycle, type AttemptContext, type HerdObserver, type Transport } from "./attempt.ts";
import { ClientInstances, hasProtection } from "./client-instances.ts";
import { decideAfterAttempt, firstWait, honorServerWait, initialUserState, type RetryConfig, type UserState } from "./client-loop.ts";
import type { AttemptOutcome, AttemptResult } from "./outcome.ts";

export interface OpenLoopOptions {
  /** Mean arrivals per second of a Poisson process. */
  readonly ratePerSec: number;
  /** No complete answer within this many ms: the attempt is aborted and counts as timedout. */
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
  /**
   * Requests alive at once at most: with an attempt in flight or a retry pending. A storm
   * with retries that never give up makes every arrival a chain that lives as long as the
   * outage, so without a bound memory grows with rate x outage; an arrival that finds this
   * many alive is not sent and is counted as dropped.
   */
  readonly maxChains: number;
}

/** What an open-loop source shares with its chains. */
interface SourceContext extends AttemptContext {
  readonly random: Random;
  readonly options: OpenLoopOptions;
  /** Chains that have ended, kept for the next arrivals: chain objects are made only up to the most alive at once. */
  readonly idle: Chain[];
  alive: number;
  /**
   * Budgets, throttles and breakers, undefined when none is on. Arrival n goes to instance
   * n mod -instances, whichever chain slot carries it (0: one instance per slot).
   */
  readonly fleet: ClientInstances | undefined;
}

/**
 * One request of an open-loop source and its retries, on the attempt cycle a closed user
 * has too (src/model/attempt.ts): retry after what the policy says, until an OK or a
 * refused retry ends it.
 */
class Chain extends AttemptCycle implements UserState {
  failures = 0;
  lastWaitMs = 0;
  protected startedAt = 0;
  /** When the next attempt is planned: the arrival's instant on the Poisson schedule, or the retry wait's due time. */
  protected plannedAt = 0;
  /** When the request arrived: its latency, to an OK or a give-up, counts from here. */
  private arrivedAt = 0;
  private readonly source: SourceContext;

  constructor(source: SourceContext, index: number) {
    super(source, index);
    this.source = source;
  }

  protected get random(): Random {
    return this.source.random;
  }

  /** The chain's slot among the client instances' users. */
  get slot(): number {
    return this.index;
  }

  /** A new request arrives (due at `plannedAt`): its first attempt goes out at once. */
  begin(plannedAt: number): void {
    const config = this.source.options.retry;
    const initial = initialUserState(config);
    this.failures = initial.failures;
    this.lastWaitMs = 0;
    // A policy whose first wait follows the think time grows it from the wait before the failed
    // attempt, a closed user's think time; an arrival has none, so it draws one as a user would.
    if (policyDefinition(config.backoff.kind).firstWaitFollowsThinkTime) firstWait(config, this, this.source.random);
    this.isRetry = false;
    this.arrivedAt = this.source.clock.now();
    this.plannedAt = plannedAt;
    this.source.observer.requestStarted?.();
    this.send();
  }

  /** Retries after what the policy says, or ends the request. */
  protected decide(outcome: AttemptOutcome, result: AttemptResult | undefined, minWaitMs: number): void {
    const source = this.source;
    const decision = decideAfterAttempt(source.options.retry, this, outcome, source.random, this.gate);
    if (decision !== "retry") {
      if (decision === "give-up") this.gaveUp();
      source.observer.requestEnded?.(outcome === "ok", source.clock.now() - this.arrivedAt, this.isRetry);
      this.end();
      return;
    }
    if (result !== undefined) honorServerWait(source.options.retry, this, result);
    this.isRetry = true;
    this.armRetry(this.lastWaitMs, minWaitMs);
  }

  private end(): void {
    this.source.alive--;
    this.source.idle.push(this);
  }
}

/** What an open-loop source reports besides the herd's counters. */
export interface OpenLoopTotals {
  /** Requests alive now (a first attempt or one of its retries pending). */
  readonly aliveChains: number;
  /** Arrivals dropped so far at -max-chains. */
  readonly droppedArrivals: number;
}

/** A plain copy of an open-loop source's figures (it crosses threads by structured clone); undefined without one. */
export function openLoopTotals(source: OpenLoopTotals | undefined): OpenLoopTotals | undefined {
  return source === undefined ? undefined : { aliveChains: source.aliveChains, droppedArrivals: source.droppedArrivals };
}

/**
 * Open-loop arrivals: requests arrive as a Poisson process at a fixed rate, whatever became
 * of earlier ones, and each follows its own retry chain, so the load is not capped by a
 * number of users (closed users, Herd, wait for their answer before they send again).
 * Arrival times are kept on an absolute schedule: a timer that fires late (a busy or
 * stopped process) sends every arrival that has come due, so the count of arrivals over
 * a run does not depend on the machine's speed.
 */
export class OpenLoop implements TimerOwner {
  clockSlot: unknown = undefined;
  private readonly context: SourceContext;
  /** Every chain made (at most maxChains), to stop them. */
  private readonly chains: Chain[] = [];
  private nextArrivalAt = 0;
  private droppedTotal = 0;
  /** Arrivals sent so far: the next one's client instance, round robin. */
  private arrivalsSent = 0;
  /** Whether -instances K spreads arrivals over K instances (with 0, each chain slot is its own instance). */
  private readonly spreadArrivals: boolean;
  private readonly meanGapMs: number;

  constructor(clock: Clock, random: Random, transport: Transport, observer: HerdObserver, options: OpenLoopOptions) {
    const fleet = hasProtection(options.retry.fleet) ? new ClientInstances(options.retry.fleet, options.maxChains) : undefined;
    this.context = {
      clock,
      random,
      transport,
      observer,
      options,
      inFlight: 0,
      stopped: false,
      stopAtMs: Infinity,
      idle: [],
      alive: 0,
      fleet,
    };
    this.meanGapMs = 1000 / options.ratePerSec;
    this.spreadArrivals = fleet !== undefined && options.retry.fleet!.instances > 0;
  }

  /** Attempts in flight. */
  get inFlight(): number {
    return this.context.inFlight;
  }

  /** The client instances' budgets, throttles and breakers (one per chain slot unless -instances); undefined when none is on. */
  get instances(): ClientInstances | undefined {
    return this.context.fleet;
  }

  /** Requests alive: an attempt in flight or a retry pending. */
  get aliveChains(): number {
    return this.context.alive;
  }

  /** Arrivals not sent because maxChains requests were alive. */
  get droppedArrivals(): number {
    return this.droppedTotal;
  }

  /** Starts the arrivals; none is sent at or after `stopAtMs` (default: never stops by itself). */
  start(stopAtMs = Infinity): void {
    this.context.stopAtMs = stopAtMs;
    const { clock, random } = this.context;
    this.nextArrivalAt = clock.now() + random.exponential(this.meanGapMs);
    clock.arm(this, this.nextArrivalAt - clock.now());
  }

  onTimer(): void {
    const context = this.context;
    const now = context.clock.now();
    if (context.stopped || now >= context.stopAtMs) return;
    while (this.nextArrivalAt <= now && !context.stopped) {
      const arrivalAt = this.nextArrivalAt;
      this.nextArrivalAt += context.random.exponential(this.meanGapMs);
      this.arrive(arrivalAt);
    }
    if (!context.stopped) context.clock.arm(this, this.nextArrivalAt - now);
  }

  /** Cancels every wait and aborts every attempt in flight; nothing is counted after this. */
  stop(): void {
    this.context.stopped = true;
    this.context.clock.cancel(this);
    for (const chain of this.chains) chain.stop();
  }

  private arrive(arrivalAt: number): void {
    const context = this.context;
    if (context.alive >= context.options.maxChains) {
      this.droppedTotal++;
      return;
    }
    let chain = context.idle.pop();
    if (chain === undefined) {
      chain = new Chain(context, this.chains.length);
      this.chains.push(chain);
    }
    context.alive++;
    if (this.spreadArrivals) context.fleet!.assign(chain.slot, this.arrivalsSent++);
    chain.begin(arrivalAt);
  }
}

import type { Random } from "../backoff/random.ts";
import type { Clock, TimerOwner } from "../clock/clock.ts";
import { ADMITTED, ClientInstances, hasProtection, THROTTLED } from "./client-instances.ts";
import {
  decideAfterAttempt,
  firstWait,
  honorServerWait,
  initialUserState,
  type RetryConfig,
  type RetryGate,
  type UserState,
} from "./client-loop.ts";
import type { AttemptSink, HerdObserver, Transport } from "./herd.ts";
import { type AttemptOutcome, type AttemptResult, TIMEDOUT_RESULT } from "./outcome.ts";

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
interface SourceContext {
  readonly clock: Clock;
  readonly random: Random;
  readonly transport: Transport;
  readonly observer: HerdObserver;
  readonly options: OpenLoopOptions;
  inFlight: number;
  stopped: boolean;
  /** Chains that have ended, kept for the next arrivals: chain objects are made only up to the most alive at once. */
  readonly idle: Chain[];
  alive: number;
  /**
   * Budgets, throttles and breakers, undefined when none is on. Chains play the part of
   * users: chain slot i belongs to instance i mod -instances (0: one instance per slot).
   */
  readonly fleet: ClientInstances | undefined;
}

/**
 * One request of an open-loop source and its retries: send, classify, retry after what the
 * policy says, until an OK or a refused retry ends it. Like a closed user it is its own
 * sink and timer (one timer for its wait and its attempt's deadline).
 */
class Chain implements UserState, AttemptSink, TimerOwner, RetryGate {
  failures = 0;
  lastWaitMs = 0;
  clockSlot: unknown = undefined;
  private isRetry = false;
  private inFlight = false;
  private startedAt = 0;
  /** When the request arrived: its latency, to an OK or a give-up, counts from here. */
  private arrivedAt = 0;
  private attempt: unknown = undefined;
  private readonly source: SourceContext;
  /** The chain's slot: which client instance it belongs to. */
  private readonly index: number;

  constructor(source: SourceContext, index: number) {
    this.source = source;
    this.index = index;
  }

  /** A new request arrives: its first attempt goes out at once. */
  begin(): void {
    const config = this.source.options.retry;
    const initial = initialUserState(config);
    this.failures = initial.failures;
    this.lastWaitMs = 0;
    // The reference policy grows its first wait from the wait before the failed attempt, a
    // closed user's think time; an arrival has none, so it draws one as a user would.
    if (config.backoff.kind === "reference") firstWait(config, this, this.source.random);
    this.isRetry = false;
    this.arrivedAt = this.source.clock.now();
    this.source.observer.requestStarted?.();
    this.send();
  }

  onTimer(): void {
    if (this.inFlight) this.done(TIMEDOUT_RESULT);
    else this.send();
  }

  private send(): void {
    const source = this.source;
    if (source.stopped) return;
    if (source.fleet !== undefined) {
      const admission = source.fleet.admit(this.index, this.isRetry, source.clock.now(), source.random);
      if (admission !== ADMITTED) {
        // Refused by the client itself: never sent; a failure for the retry loop, decided
        // after Node's minimum timer wait so that a zero backoff cannot spin at one instant.
        const refusal = admission === THROTTLED ? "throttled" : "rejected";
        source.observer.attemptRefused(refusal);
        source.fleet.refused(this.index);
        this.decide(refusal, undefined, 1);
        return;
      }
    }
    this.startedAt = source.clock.now();
    source.inFlight++;
    source.observer.attemptStarted(this.isRetry);
    this.inFlight = true;
    source.clock.arm(this, source.options.timeoutMs);
    const attempt = source.transport.send(this);
    if (this.inFlight) this.attempt = attempt;
  }

  done(result: AttemptResult): void {
    if (!this.inFlight) return;
    const source = this.source;
    this.inFlight = false;
    source.clock.cancel(this);
    source.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    if (result === TIMEDOUT_RESULT) source.transport.abort(attempt);
    if (source.stopped) return;
    source.observer.attemptEnded(result, source.clock.now() - this.startedAt);
    source.fleet?.attemptEnded(this.index, result.outcome, source.clock.now());
    this.decide(result.outcome, result, 0);
  }

  /** Retries after what the policy says, or ends the request. */
  private decide(outcome: AttemptOutcome, result: AttemptResult | undefined, minWaitMs: number): void {
    const source = this.source;
    const decision = decideAfterAttempt(source.options.retry, this, outcome, source.random, source.fleet === undefined ? undefined : this);
    if (decision !== "retry") {
      if (decision === "give-up") {
        source.observer.gaveUp();
        source.fleet?.requestAbandoned(this.index);
      }
      source.observer.requestEnded?.(outcome === "ok", source.clock.now() - this.arrivedAt, this.isRetry);
      this.end();
      return;
    }
    if (result !== undefined) honorServerWait(source.options.retry, this, result);
    this.isRetry = true;
    source.clock.arm(this, this.lastWaitMs < minWaitMs ? minWaitMs : this.lastWaitMs);
  }

  /** RetryGate: the budget of this chain's instance decides. */
  allowRetry(outcome: AttemptOutcome): boolean {
    return this.source.fleet!.allowRetry(this.index, outcome, this.source.clock.now());
  }

  /** Cancels the wait, or ends the attempt in flight without counting it. */
  stop(): void {
    const source = this.source;
    source.clock.cancel(this);
    if (!this.inFlight) return;
    this.inFlight = false;
    source.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    source.transport.abort(attempt);
  }

  private end(): void {
    this.source.alive--;
    this.source.idle.push(this);
  }
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
  private readonly meanGapMs: number;

  constructor(clock: Clock, random: Random, transport: Transport, observer: HerdObserver, options: OpenLoopOptions) {
    const fleet = hasProtection(options.retry.fleet) ? new ClientInstances(options.retry.fleet, options.maxChains) : undefined;
    this.context = { clock, random, transport, observer, options, inFlight: 0, stopped: false, idle: [], alive: 0, fleet };
    this.meanGapMs = 1000 / options.ratePerSec;
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

  start(): void {
    const { clock, random } = this.context;
    this.nextArrivalAt = clock.now() + random.exponential(this.meanGapMs);
    clock.arm(this, this.nextArrivalAt - clock.now());
  }

  onTimer(): void {
    const context = this.context;
    if (context.stopped) return;
    const now = context.clock.now();
    while (this.nextArrivalAt <= now && !context.stopped) {
      this.nextArrivalAt += context.random.exponential(this.meanGapMs);
      this.arrive();
    }
    if (!context.stopped) context.clock.arm(this, this.nextArrivalAt - now);
  }

  /** Cancels every wait and aborts every attempt in flight; nothing is counted after this. */
  stop(): void {
    this.context.stopped = true;
    this.context.clock.cancel(this);
    for (const chain of this.chains) chain.stop();
  }

  private arrive(): void {
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
    chain.begin();
  }
}

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
import { type AttemptOutcome, type AttemptResult, type LocalRefusal, TIMEDOUT_RESULT } from "./outcome.ts";
import type { Random } from "../backoff/random.ts";

/** Where a transport reports the result of an attempt. */
export interface AttemptSink {
  done(result: AttemptResult): void;
}

/**
 * How attempts reach a server: the real client sends HTTP with undici, the simulator
 * hands them to a modelled network. `send` reports through `sink.done` exactly once,
 * unless the attempt is aborted first, and never after that; it may report before it
 * returns. It returns whatever the transport needs to abort that attempt (an
 * AbortController, a ticket number), so that an attempt costs no closure. Callbacks, not
 * promises, so that a virtual clock sees every step in order.
 */
export interface Transport<Attempt = unknown> {
  send(sink: AttemptSink): Attempt;
  /** Aborts an attempt in flight (and its connection). */
  abort(attempt: Attempt): void;
}

/** What a herd tells its statistics; times in ms on the herd's clock. */
export interface HerdObserver {
  attemptStarted(isRetry: boolean): void;
  attemptEnded(result: AttemptResult, latencyMs: number): void;
  /** An attempt the client refused itself (throttle, open breaker): never sent, never counted as an attempt. */
  attemptRefused(refusal: LocalRefusal): void;
  gaveUp(): void;
  /**
   * A request ended: it succeeded, or its user gave it up. `latencyMs` runs from its first
   * attempt to its end, retries and waits included: what the user waited; `retried` says it
   * took more than one try (sent or refused locally). Optional, so that a herd whose
   * observer does not ask for it does no extra work.
   */
  requestEnded?(ok: boolean, latencyMs: number, retried: boolean): void;
  /** A request made its first try (asked for only with requestEnded): requests still open at the end are counted from these. */
  requestStarted?(): void;
}

export interface HerdOptions {
  readonly users: number;
  /**
   * The first user's number in the whole herd, when this herd is one share of it (a shard, a
   * worker thread): users are numbered from here, for `randomFor`. Default 0.
   */
  readonly firstUser?: number;
  /** No complete answer within this many ms: the attempt is aborted and counts as timedout. */
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
}

/**
 * Where users draw their random numbers: one Random shared in event order (the simulator,
 * whose events have one order), or each user its own, by its number in the whole herd (the
 * real client: a user's schedule then does not depend on the network's timing, nor on how
 * the herd is split across threads and processes).
 */
export type HerdRandom = Random | { readonly randomFor: (user: number) => Random };

/** What the users of one herd share. */
interface HerdContext {
  readonly clock: Clock;
  readonly transport: Transport;
  readonly observer: HerdObserver;
  readonly options: HerdOptions;
  /** The budgets, throttles and breakers of the client instances; undefined when none is on. */
  readonly fleet: ClientInstances | undefined;
  inFlight: number;
  stopped: boolean;
  /**
   * Each user's two times side by side: [2i] its last wait (UserState.lastWaitMs), [2i+1]
   * when its attempt in flight started. In a typed array rather than in the users: a
   * number field that holds fractions is a separate heap object in V8, one more cache
   * miss per write for a million users.
   */
  readonly times: Float64Array;
  /** When each user's current request made its first attempt; empty unless the observer has requestEnded. */
  readonly requestStarts: Float64Array;
}

/**
 * One simulated user: its client-loop state, its timer and its attempt in flight. A user
 * has at most one attempt at a time, so it is itself the sink of its attempts; it waits
 * or has an attempt in flight, never both, so one timer serves for its wait and for its
 * attempt's deadline, and the user is that timer (a TimerOwner). An attempt allocates
 * nothing in the herd, which matters when a million users run in virtual time.
 */
class User implements UserState, AttemptSink, TimerOwner, RetryGate {
  failures: number;
  clockSlot: unknown = undefined;
  private isRetry = false;
  private inFlight = false;
  /** What the transport returned for the attempt in flight. */
  private attempt: unknown = undefined;
  private readonly herd: HerdContext;
  /** The user's number in the herd: where its times are. */
  private readonly index: number;
  private readonly random: Random;

  constructor(herd: HerdContext, index: number, random: Random) {
    this.herd = herd;
    this.index = index;
    this.random = random;
    const initial = initialUserState(herd.options.retry);
    this.failures = initial.failures;
    this.lastWaitMs = initial.lastWaitMs;
  }

  get lastWaitMs(): number {
    return this.herd.times[2 * this.index]!;
  }

  set lastWaitMs(ms: number) {
    this.herd.times[2 * this.index] = ms;
  }

  private get startedAt(): number {
    return this.herd.times[2 * this.index + 1]!;
  }

  private set startedAt(ms: number) {
    this.herd.times[2 * this.index + 1] = ms;
  }

  /** The wait is over (send), or the attempt's deadline has passed. */
  onTimer(): void {
    if (this.inFlight) this.done(TIMEDOUT_RESULT);
    else this.send();
  }

  private send(): void {
    const herd = this.herd;
    if (herd.stopped) return;
    this.startedAt = herd.clock.now();
    // A request starts with its first try, sent or refused locally.
    if (!this.isRetry && herd.requestStarts.length > 0) {
      herd.requestStarts[this.index] = this.startedAt;
      herd.observer.requestStarted?.();
    }
    if (herd.fleet !== undefined) {
      const admission = herd.fleet.admit(this.index, this.isRetry, this.startedAt, this.random);
      if (admission !== ADMITTED) {
        this.refuse(admission === THROTTLED ? "throttled" : "rejected");
        return;
      }
    }
    herd.inFlight++;
    herd.observer.attemptStarted(this.isRetry);
    this.inFlight = true;
    herd.clock.arm(this, herd.options.timeoutMs);
    const attempt = herd.transport.send(this);
    // The transport may have answered already (a server shedding load).
    if (this.inFlight) this.attempt = attempt;
  }

  done(result: AttemptResult): void {
    if (!this.inFlight) return;
    const herd = this.herd;
    this.inFlight = false;
    herd.clock.cancel(this);
    herd.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    // Our deadline passed: abort the request and its connection, as the reference does.
    if (result === TIMEDOUT_RESULT) herd.transport.abort(attempt);
    if (herd.stopped) return;
    herd.observer.attemptEnded(result, herd.clock.now() - this.startedAt);
    if (herd.fleet !== undefined) {
      herd.fleet.attemptEnded(this.index, result.outcome, herd.clock.now());
      this.decide(result.outcome, 0, result);
      return;
    }
    const decision = decideAfterAttempt(herd.options.retry, this, result.outcome, this.random);
    honorServerWait(herd.options.retry, this, result);
    if (decision === "give-up") herd.observer.gaveUp();
    if (decision !== "retry" && herd.requestStarts.length > 0) {
      herd.observer.requestEnded?.(decision === "think", herd.clock.now() - herd.requestStarts[this.index]!, this.isRetry);
    }
    this.isRetry = decision === "retry";
    herd.clock.arm(this, this.lastWaitMs);
  }

  /** The client refused this attempt itself: it fails at once, at no cost to the server. */
  private refuse(refusal: LocalRefusal): void {
    const herd = this.herd;
    herd.observer.attemptRefused(refusal);
    herd.fleet!.refused(this.index);
    // Node waits at least 1 ms for any timer; so does the simulator, or a zero backoff
    // after a local refusal would spin at one instant.
    this.decide(refusal, 1);
  }

  /** Decides and arms the next wait, with the client instances' budget as the gate. */
  private decide(outcome: AttemptOutcome, minWaitMs: number, result?: AttemptResult): void {
    const herd = this.herd;
    const decision = decideAfterAttempt(herd.options.retry, this, outcome, this.random, this);
    if (result !== undefined) honorServerWait(herd.options.retry, this, result);
    if (decision === "give-up") {
      herd.observer.gaveUp();
      herd.fleet!.requestAbandoned(this.index);
    }
    if (decision !== "retry" && herd.requestStarts.length > 0) {
      herd.observer.requestEnded?.(decision === "think", herd.clock.now() - herd.requestStarts[this.index]!, this.isRetry);
    }
    this.isRetry = decision === "retry";
    const waitMs = this.lastWaitMs;
    herd.clock.arm(this, waitMs < minWaitMs ? minWaitMs : waitMs);
  }

  /** RetryGate: the budget of this user's instance decides. */
  allowRetry(outcome: AttemptOutcome): boolean {
    return this.herd.fleet!.allowRetry(this.index, outcome, this.herd.clock.now());
  }

  /** The first wait, before the first request. */
  start(): void {
    this.herd.clock.arm(this, firstWait(this.herd.options.retry, this, this.random));
  }

  /** Cancels the wait, or ends the attempt in flight without counting it. */
  stop(): void {
    this.herd.clock.cancel(this);
    if (!this.inFlight) return;
    this.inFlight = false;
    this.herd.inFlight--;
    const attempt = this.attempt;
    this.attempt = undefined;
    this.herd.transport.abort(attempt);
  }
}

/**
 * N independent simulated users on one clock. Each waits, sends, and decides its next wait
 * with the pure client loop; the herd only keeps timers and in-flight attempts.
 */
export class Herd {
  private readonly users: User[] = [];
  private readonly context: HerdContext;
  private readonly random: HerdRandom;

  constructor(clock: Clock, random: HerdRandom, transport: Transport, observer: HerdObserver, options: HerdOptions) {
    const fleet = hasProtection(options.retry.fleet) ? new ClientInstances(options.retry.fleet, options.users) : undefined;
    this.random = random;
    this.context = {
      clock,
      transport,
      observer,
      options,
      fleet,
      inFlight: 0,
      stopped: false,
      times: new Float64Array(2 * options.users),
      requestStarts: new Float64Array(observer.requestEnded === undefined ? 0 : options.users),
    };
  }

  get inFlight(): number {
    return this.context.inFlight;
  }

  /** Each user's retry state, read-only (the client's metrics read the retry budgets). */
  /** The client instances' budgets, throttles and breakers; undefined when none is on. */
  get instances(): ClientInstances | undefined {
    return this.context.fleet;
  }

  start(): void {
    const random = this.random;
    const firstUser = this.context.options.firstUser ?? 0;
    for (let index = 0; index < this.context.options.users; index++) {
      const user = new User(this.context, index, "randomFor" in random ? random.randomFor(firstUser + index) : random);
      this.users.push(user);
      user.start();
    }
  }

  /** Cancels every wait and aborts every attempt in flight; nothing is counted after this. */
  stop(): void {
    this.context.stopped = true;
    for (const user of this.users) user.stop();
  }
}

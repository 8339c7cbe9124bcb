import type { Random } from "../backoff/random.ts";
import type { Clock } from "../clock/clock.ts";
import { type AttemptContext, AttemptCycle, FLAG_BITS, type HerdObserver, type Transport } from "./attempt.ts";
import { ClientInstances, hasProtection } from "./client-instances.ts";
import { decideAfterAttempt, firstWait, honorServerWait, initialUserState, type RetryConfig, type UserState } from "./client-loop.ts";
import type { AttemptOutcome, AttemptResult } from "./outcome.ts";

// The attempt's types live in attempt.ts; exported here too, for callers that build a herd.
export type { AttemptSink, HerdObserver, Transport } from "./attempt.ts";

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

/** User's own flag, above the attempt cycle's: its plan is in HerdContext.plans (see User.plannedAt). */
const PLAN_STORED = 1 << FLAG_BITS;
/** Where User.failures starts among the flags. */
const FAILURES_SHIFT = FLAG_BITS + 1;
/** The most consecutive failures User.failures holds (above the flags, in a 31-bit small integer). */
const MAX_FAILURES = 2 ** (30 - FAILURES_SHIFT) - 1;

/** What the users of one herd share. */
interface HerdContext extends AttemptContext {
  readonly options: HerdOptions;
  /**
   * Each user's two times side by side, 16 bytes that never straddle two cache lines: [2i]
   * its last wait (UserState.lastWaitMs), [2i+1] when its attempt in flight started. In a
   * typed array rather than in the users: a number field that holds fractions is a separate
   * heap object in V8, one more cache miss per write for a million users.
   */
  readonly times: Float64Array;
  /**
   * When each user's next attempt is planned, kept only where it is read (User.plannedAt): on
   * a punctual clock a wait ends exactly at its plan, and a million users' plans written and
   * never read took 3–4 % of a run (BENCHMARKS.md). Untouched pages of it cost no memory.
   */
  readonly plans: Float64Array;
  /** Whether every plan is kept: on a clock that is not punctual, and for hedging, which reads each. */
  readonly keepsPlans: boolean;
  /** When each user's current request made its first attempt; empty unless the observer has requestEnded. */
  readonly requestStarts: Float64Array;
  /** The Random every user draws from, in event order; undefined when each has its own (`randoms`). */
  readonly sharedRandom: Random | undefined;
  /** Each user's own Random, by index, when there is no shared one. */
  readonly randoms: Random[];
}

/**
 * One simulated user: its client-loop state and its attempt cycle (src/model/attempt.ts).
 * After an answer it thinks, retries or gives up, and starts again.
 */
class User extends AttemptCycle implements UserState {
  constructor(herd: HerdContext, index: number) {
    super(herd, index);
    const initial = initialUserState(herd.options.retry);
    this.failures = initial.failures;
    this.lastWaitMs = initial.lastWaitMs;
  }

  /** Consecutive failures, kept above the attempt cycle's flags: one field less in each of a million users. */
  get failures(): number {
    return this.flags >>> FAILURES_SHIFT;
  }

  set failures(failures: number) {
    // The flags are a 31-bit small integer, so the count saturates at 2^25 - 1 rather than wrap or
    // throw: a validated run must never die. Every backoff reaches its cap long before, and 33 million
    // failures of one user take 9 hours of virtual time even at one a millisecond.
    this.flags = (this.flags & ((1 << FAILURES_SHIFT) - 1)) | (Math.min(failures, MAX_FAILURES) << FAILURES_SHIFT);
  }

  get lastWaitMs(): number {
    return this.herd.times[2 * this.index]!;
  }

  set lastWaitMs(ms: number) {
    this.herd.times[2 * this.index] = ms;
  }

  protected get startedAt(): number {
    return this.herd.times[2 * this.index + 1]!;
  }

  protected set startedAt(ms: number) {
    this.herd.times[2 * this.index + 1] = ms;
  }

  /** Read only while stored: latenessAt reads it on a clock that is not punctual or after a hold (notSent); hedging keeps them all. */
  protected get plannedAt(): number {
    return this.herd.plans[this.index]!;
  }

  /** A plan that will be read is stored; on a punctual clock, a plan made after no hold is its wait's due time, and is not. */
  protected set plannedAt(ms: number) {
    const herd = this.herd;
    if (herd.keepsPlans || this.wasHeldBack) {
      herd.plans[this.index] = ms;
      this.flags |= PLAN_STORED;
    } else {
      this.flags &= ~PLAN_STORED;
    }
  }

  /**
   * An attempt that could not be sent goes out later, late against its plan: the plan is
   * stored now if it was not. Only a punctual clock leaves one unstored, and such a clock
   * sent this attempt exactly when it was planned.
   */
  protected override holdingBack(): void {
    if ((this.flags & PLAN_STORED) === 0) {
      this.herd.plans[this.index] = this.startedAt;
      this.flags |= PLAN_STORED;
    }
  }

  /** The herd's context (AttemptCycle's, typed): not a field of its own, for a million users' memory's sake. */
  private get herd(): HerdContext {
    return this.context as HerdContext;
  }

  protected get random(): Random {
    const herd = this.herd;
    return herd.sharedRandom ?? herd.randoms[this.index]!;
  }

  /**
   * On a punctual clock a user's wait ends exactly when planned (waitFor and the clock add
   * the same delay to the same instant), unless the attempt was held back: 0 then, without
   * reading the plan, which for a million users would be a cache miss per attempt.
   */
  protected override latenessAt(now: number): number {
    return this.herd.clock.punctual === true && !this.wasHeldBack ? 0 : super.latenessAt(now);
  }

  /** A request starts with its first try, sent or refused locally. */
  protected override beforeAttempt(): void {
    if (!this.isRetry && this.herd.requestStarts.length > 0) {
      this.herd.requestStarts[this.index] = this.startedAt;
      this.herd.observer.requestStarted?.();
    }
  }

  /** Think, retry or give up (and think), as the client loop says; the next wait is armed either way. */
  protected decide(outcome: AttemptOutcome, result: AttemptResult | undefined, minWaitMs: number): void {
    const herd = this.herd;
    const decision = decideAfterAttempt(herd.options.retry, this, outcome, this.random, this.gate);
    if (result !== undefined) honorServerWait(herd.options.retry, this, result);
    if (decision === "give-up") this.gaveUp();
    if (decision !== "retry" && herd.requestStarts.length > 0) {
      herd.observer.requestEnded?.(decision === "think", herd.clock.now() - herd.requestStarts[this.index]!, this.isRetry);
    }
    this.isRetry = decision === "retry";
    this.armRetry(this.lastWaitMs, minWaitMs);
  }

  /** The first wait, before the first request. */
  start(): void {
    this.waitFor(firstWait(this.herd.options.retry, this, this.random));
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
    const times = new Float64Array(2 * options.users);
    this.random = random;
    this.context = {
      clock,
      transport,
      observer,
      options,
      fleet,
      inFlight: 0,
      stopped: false,
      stopAtMs: Infinity,
      times,
      // The clock and the server read a user's row a little before it is due (warmOwner): its
      // answer reads startedAt, its wait writes lastWaitMs.
      warmRows: times,
      warmRowStride: 2,
      plans: new Float64Array(options.users),
      keepsPlans: clock.punctual !== true || options.retry.hedgeDelayMs !== undefined,
      requestStarts: new Float64Array(observer.requestEnded === undefined ? 0 : options.users),
      sharedRandom: "randomFor" in random ? undefined : random,
      randoms: [],
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

  /** Starts every user; none sends at or after `stopAtMs` (default: never stops by itself). */
  start(stopAtMs = Infinity): void {
    this.context.stopAtMs = stopAtMs;
    const random = this.random;
    const firstUser = this.context.options.firstUser ?? 0;
    for (let index = 0; index < this.context.options.users; index++) {
      if ("randomFor" in random) this.context.randoms.push(random.randomFor(firstUser + index));
      const user = new User(this.context, index);
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

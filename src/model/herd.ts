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

/** The most consecutive failures User.failures holds (above FLAG_BITS flag bits, in a 31-bit small integer). */
const MAX_FAILURES = 2 ** (30 - FLAG_BITS) - 1;

/** What the users of one herd share. */
interface HerdContext extends AttemptContext {
  readonly options: HerdOptions;
  /**
   * Each user's three times side by side: [3i] its last wait (UserState.lastWaitMs), [3i+1]
   * when its attempt in flight started, [3i+2] when its next attempt is planned (its wait's
   * due time). In a typed array rather than in the users: a
   * number field that holds fractions is a separate heap object in V8, one more cache
   * miss per write for a million users.
   */
  readonly times: Float64Array;
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
    return this.flags >>> FLAG_BITS;
  }

  set failures(failures: number) {
    // The flags are a 31-bit small integer, so the count saturates at 2^26 - 1 rather than wrap or
    // throw: a validated run must never die. Every backoff reaches its cap long before, and 67 million
    // failures of one user take 18 hours of virtual time even at one a millisecond.
    this.flags = (this.flags & ((1 << FLAG_BITS) - 1)) | (Math.min(failures, MAX_FAILURES) << FLAG_BITS);
  }

  get lastWaitMs(): number {
    return this.herd.times[3 * this.index]!;
  }

  set lastWaitMs(ms: number) {
    this.herd.times[3 * this.index] = ms;
  }

  protected get startedAt(): number {
    return this.herd.times[3 * this.index + 1]!;
  }

  protected set startedAt(ms: number) {
    this.herd.times[3 * this.index + 1] = ms;
  }

  protected get plannedAt(): number {
    return this.herd.times[3 * this.index + 2]!;
  }

  protected set plannedAt(ms: number) {
    this.herd.times[3 * this.index + 2] = ms;
  }

  /**
   * The clock and the server read a user a little before it is due (TimerOwner.warm): its
   * times row too, first and last of the three, which may lie in two cache lines. Its answer
   * reads startedAt, its wait writes the other two.
   */
  warm(): number {
    const times = this.herd.times;
    const row = 3 * this.index;
    return times[row]! + times[row + 2]!;
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
      times: new Float64Array(3 * options.users),
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

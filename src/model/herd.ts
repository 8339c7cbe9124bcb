import type { Clock, Timer } from "./clock.ts";
import { afterAttempt, firstWait, initialUserState, type RetryConfig, type UserState } from "./client-loop.ts";
import { type AttemptResult, TIMEDOUT_RESULT } from "./outcome.ts";
import type { Random } from "./random.ts";

/**
 * How attempts reach a server: the real client sends HTTP with undici, the simulator
 * hands them to a modelled network. `send` reports through `done` exactly once unless the
 * returned abort function is called first; callbacks, not promises, so that a virtual
 * clock sees every step in order.
 */
export interface Transport {
  send(done: (result: AttemptResult) => void): () => void;
}

/** What a herd tells its statistics; times in ms on the herd's clock. */
export interface HerdObserver {
  attemptStarted(isRetry: boolean): void;
  attemptEnded(result: AttemptResult, latencyMs: number): void;
  gaveUp(): void;
}

export interface HerdOptions {
  readonly users: number;
  /** No complete answer within this many ms: the attempt is aborted and counts as timedout. */
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
}

interface User {
  readonly state: UserState;
  timer: Timer | undefined;
  isRetry: boolean;
  abortAttempt: (() => void) | undefined;
  readonly fire: () => void;
}

/**
 * N independent simulated users on one clock. Each waits, sends, and decides its next wait
 * with the pure client loop; the herd only keeps timers and in-flight attempts.
 */
export class Herd {
  private readonly users: User[] = [];
  private inFlightCount = 0;
  private stopped = false;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly transport: Transport;
  private readonly observer: HerdObserver;
  private readonly options: HerdOptions;

  constructor(clock: Clock, random: Random, transport: Transport, observer: HerdObserver, options: HerdOptions) {
    this.clock = clock;
    this.random = random;
    this.transport = transport;
    this.observer = observer;
    this.options = options;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  start(): void {
    for (let index = 0; index < this.options.users; index++) {
      const user: User = {
        state: initialUserState(this.options.retry),
        timer: undefined,
        isRetry: false,
        abortAttempt: undefined,
        fire: () => this.startAttempt(user),
      };
      this.users.push(user);
      user.timer = this.clock.schedule(firstWait(this.options.retry, user.state, this.random), user.fire);
    }
  }

  /** Cancels every wait and aborts every attempt in flight; nothing is counted after this. */
  stop(): void {
    this.stopped = true;
    for (const user of this.users) {
      if (user.timer !== undefined) this.clock.cancel(user.timer);
      user.timer = undefined;
      const abort = user.abortAttempt;
      user.abortAttempt = undefined;
      abort?.();
    }
  }

  private startAttempt(user: User): void {
    user.timer = undefined;
    if (this.stopped) return;
    const startedAt = this.clock.now();
    let settled = false;
    let abortTransport: (() => void) | undefined;
    this.inFlightCount++;
    this.observer.attemptStarted(user.isRetry);
    const settle = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      this.clock.cancel(timeoutTimer);
      this.inFlightCount--;
      user.abortAttempt = undefined;
      // Our deadline passed: abort the request and its connection, as the reference does.
      if (result === TIMEDOUT_RESULT) abortTransport?.();
      if (this.stopped) return;
      this.observer.attemptEnded(result, this.clock.now() - startedAt);
      const next = afterAttempt(this.options.retry, user.state, result.outcome, this.random);
      if (next.decision === "give-up") this.observer.gaveUp();
      user.isRetry = next.decision === "retry";
      user.timer = this.clock.schedule(next.waitMs, user.fire);
    };
    const timeoutTimer = this.clock.schedule(this.options.timeoutMs, () => settle(TIMEDOUT_RESULT));
    user.abortAttempt = () => {
      if (settled) return;
      settled = true;
      this.clock.cancel(timeoutTimer);
      this.inFlightCount--;
      abortTransport?.();
    };
    abortTransport = this.transport.send(settle);
    if (settled) user.abortAttempt = undefined;
  }
}

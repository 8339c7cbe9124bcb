import { seededRandom, type Random } from "./random.ts";
import { attemptAllowed } from "./budget.ts";
import { nextDelay } from "./delay.ts";
import { type BackoffPolicy, validatePolicy } from "./policy.ts";
import { validateMaxAttempts } from "./validate.ts";

/*
 * The I/O convenience layer: real timers and a default random seed live here and nowhere
 * else in src/backoff. Callers who need control (a simulator, a virtual clock) loop
 * themselves over nextDelay, as the README's library section shows.
 */

/**
 * Node's setTimeout fires after 1 ms for any delay above 2^31-1 ms, so longer sleeps are
 * taken in chunks of at most this size.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves after `ms` milliseconds (NaN or negative: 0; Infinity: never, unless aborted).
 * Rejects with `signal.reason` if the signal aborts first, and then leaves no timer behind.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    let remainingMs = ms > 0 ? ms : 0;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const wake = (): void => {
      if (remainingMs > 0) {
        const chunkMs = Math.min(remainingMs, MAX_TIMER_MS);
        remainingMs -= chunkMs;
        timer = setTimeout(wake, chunkMs);
        return;
      }
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };

    signal?.addEventListener("abort", onAbort, { once: true });
    if (remainingMs === 0) timer = setTimeout(wake, 0);
    else wake();
  });
}

/*
 * "Attempt" means one thing everywhere in this library: the 1-based number of a call. The
 * first call is attempt 1, the first retry attempt 2. A function that is told about a
 * failure is given the number of the attempt that failed, which is also the number of
 * consecutive failures so far; `nextDelay(policy, attempt, …)` is the wait after attempt
 * `attempt` failed, before attempt `attempt + 1`.
 */

/** What `fn` is given for each call. */
export interface AttemptContext {
  /** This call's number: 1 for the first. */
  readonly attempt: number;
  /** Aborted when the caller's signal aborts: pass it on (e.g. to fetch) to cancel the call in flight. */
  readonly signal: AbortSignal;
}

/** A richer answer from `shouldRetry`: whether to retry, and how long the server asked to wait. */
export interface RetryDecision {
  readonly retry: boolean;
  /**
   * A server-directed wait in ms (e.g. from `Retry-After`, see parseRetryAfter): it replaces
   * the policy's wait for this retry. A negative value means the server asks not to retry.
   */
  readonly afterMs?: number | undefined;
}

export interface RetryInfo {
  /** The error the failed attempt threw. */
  readonly error: unknown;
  /** The attempt that failed (1 for the first call). */
  readonly attempt: number;
  /** The wait about to start, ms. */
  readonly delayMs: number;
  /** Whether the wait came from the server (RetryDecision.afterMs or the error's `retryAfterMs`) rather than the policy. */
  readonly serverDirected: boolean;
}

export interface RetryOptions {
  /** Aborts the call in flight (through AttemptContext.signal) and the wait; `retry` then rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Whether to retry after `error` from attempt `attempt`. Default: always. Return false for
   * fatal errors (`retry` then rejects with that error), or a RetryDecision to pass on a
   * server-directed wait.
   */
  readonly shouldRetry?: ((error: unknown, attempt: number) => boolean | RetryDecision | PromiseLike<boolean | RetryDecision>) | undefined;
  /**
   * Most attempts in total, including the first call (gRPC A6 style): an integer >= 1,
   * or Infinity. Default Infinity: the policy decides (only google gives up by itself).
   */
  readonly maxAttempts?: number | undefined;
  /** Source of jitter. Default: a seededRandom with a fresh seed per call. */
  readonly random?: Random | undefined;
  /** Called before each wait, e.g. to log. */
  readonly onRetry?: ((info: RetryInfo) => void) | undefined;
}

/**
 * Calls `fn` until it resolves, waiting after each failure for what the server asked (a
 * RetryDecision's `afterMs`, or a numeric `retryAfterMs` on the error), or else for
 * `nextDelay(policy, …)`. Rejects with the last error once `shouldRetry` says no,
 * `maxAttempts` is reached, the policy gives up or the server asks not to retry, and with
 * `signal.reason` on abort.
 */
export async function retry<T>(
  fn: (context: AttemptContext) => T | PromiseLike<T>,
  policy: BackoffPolicy,
  options: RetryOptions = {},
): Promise<T> {
  validatePolicy(policy);
  const maxAttempts = validateMaxAttempts(options.maxAttempts ?? Infinity);
  const { shouldRetry, onRetry } = options;
  const signal = options.signal ?? new AbortController().signal;
  const random = options.random ?? seededRandom(Math.floor(Math.random() * 2 ** 31));

  let previousDelayMs: number | undefined;
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    try {
      return await fn({ attempt, signal });
    } catch (error) {
      signal.throwIfAborted();
      if (!attemptAllowed(maxAttempts, attempt + 1)) throw error;
      const answer = shouldRetry === undefined ? true : await shouldRetry(error, attempt);
      const decision: RetryDecision = typeof answer === "boolean" ? { retry: answer } : answer;
      if (!decision.retry) throw error;
      const serverMs = decision.afterMs ?? retryAfterOf(error);
      if (serverMs !== undefined && serverMs < 0) throw error;
      const delayMs = serverMs ?? nextDelay(policy, attempt, previousDelayMs, random);
      if (delayMs === undefined) throw error;
      onRetry?.({ error, attempt, delayMs, serverDirected: serverMs !== undefined });
      await sleep(delayMs, signal);
      previousDelayMs = delayMs;
    }
  }
}

/** A server-directed wait carried by the error itself, as a finite number of ms. */
function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === "number" && !Number.isNaN(value) ? value : undefined;
}

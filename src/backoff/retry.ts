import { seededRandom, type Random } from "./random.ts";
import { attemptAllowed } from "./budget.ts";
import { nextDelay } from "./delay.ts";
import type { BackoffPolicy } from "./policy.ts";
import { validateMaxAttempts, validatePolicy } from "./validate.ts";

/*
 * The I/O convenience layer: real timers and a default random seed live here and nowhere
 * else in src/backoff. Callers who need control (a simulator, a virtual clock) loop
 * themselves over nextDelay, as docs/backoff.md shows.
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

export interface RetryInfo {
  /** The error the failed attempt threw. */
  readonly error: unknown;
  /** Consecutive failures so far (1 after the first failure). */
  readonly attempt: number;
  /** The wait about to start, ms. */
  readonly delayMs: number;
}

export interface RetryOptions {
  /** Aborts the wait and stops retrying; `retry` then rejects with `signal.reason`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Whether to retry after `error`, the `attempt`-th consecutive failure. Default: always.
   * Return false for fatal errors; `retry` then rejects with that error.
   */
  readonly shouldRetry?: ((error: unknown, attempt: number) => boolean | PromiseLike<boolean>) | undefined;
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
 * Calls `fn` until it resolves, waiting `nextDelay(policy, …)` after each failure. Rejects
 * with the last error once `shouldRetry` says no, `maxAttempts` is reached or the policy
 * gives up, and with `signal.reason` on abort. `fn` receives the attempt number (1 for the
 * first call).
 */
export async function retry<T>(fn: (attempt: number) => T | PromiseLike<T>, policy: BackoffPolicy, options: RetryOptions = {}): Promise<T> {
  validatePolicy(policy);
  const maxAttempts = validateMaxAttempts(options.maxAttempts ?? Infinity);
  const { signal, shouldRetry, onRetry } = options;
  const random = options.random ?? seededRandom(Math.floor(Math.random() * 2 ** 31));

  let failures = 0;
  let previousDelayMs: number | undefined;
  for (;;) {
    signal?.throwIfAborted();
    try {
      return await fn(failures + 1);
    } catch (error) {
      failures += 1;
      signal?.throwIfAborted();
      if (!attemptAllowed(maxAttempts, failures + 1)) throw error;
      if (shouldRetry !== undefined && !(await shouldRetry(error, failures))) throw error;
      const delayMs = nextDelay(policy, failures, previousDelayMs, random);
      if (delayMs === undefined) throw error;
      onRetry?.({ error, attempt: failures, delayMs });
      await sleep(delayMs, signal);
      previousDelayMs = delayMs;
    }
  }
}

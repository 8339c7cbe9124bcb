import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nextDelay } from "../../../src/backoff/delay.ts";
import { constantPolicy, decorrelatedJitterPolicy, googlePolicy, type BackoffPolicy } from "../../../src/backoff/policy.ts";
import { type AttemptContext, retry, sleep, type RetryInfo } from "../../../src/backoff/retry.ts";
import { parseRetryAfter } from "../../../src/backoff/retry-after.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Settles a promise into a value that can be inspected later without unhandled rejections. */
function settle<T>(promise: Promise<T>): { readonly state: () => string; readonly result: Promise<unknown> } {
  let state = "pending";
  const result = promise.then(
    (value) => {
      state = "resolved";
      return value;
    },
    (error: unknown) => {
      state = "rejected";
      return error;
    },
  );
  return { state: () => state, result };
}

/** A fake operation that fails `failures` times, then returns "ok". */
function flaky(failures: number): { readonly fn: (context: AttemptContext) => Promise<string>; readonly calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    fn: async ({ attempt }) => {
      calls.push(attempt);
      if (calls.length <= failures) throw new Error(`failure ${calls.length}`);
      return "ok";
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("sleep (fake timers)", () => {
  it("resolves after the time, not before", async () => {
    vi.useFakeTimers();
    const sleeping = settle(sleep(1000));
    await vi.advanceTimersByTimeAsync(999);
    expect(sleeping.state()).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(sleeping.state()).toBe("resolved");
  });

  it("waits longer than 2^31-1 ms in chunks instead of firing early", async () => {
    vi.useFakeTimers();
    const sleeping = settle(sleep(MAX_TIMER_MS + 10_000));
    await vi.advanceTimersByTimeAsync(1);
    expect(sleeping.state()).toBe("pending");
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS - 1);
    expect(sleeping.state()).toBe("pending");
    await vi.advanceTimersByTimeAsync(9999);
    expect(sleeping.state()).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(sleeping.state()).toBe("resolved");
  });

  it("rejects with the signal's reason on abort and clears its timer", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const sleeping = settle(sleep(Infinity, controller.signal));
    await vi.advanceTimersByTimeAsync(3 * MAX_TIMER_MS);
    expect(sleeping.state()).toBe("pending");
    expect(vi.getTimerCount()).toBe(1);
    const reason = new Error("stop");
    controller.abort(reason);
    expect(await sleeping.result).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects at once, without a timer, if the signal is already aborted", async () => {
    vi.useFakeTimers();
    const reason = new Error("already");
    const sleeping = settle(sleep(1000, AbortSignal.abort(reason)));
    expect(vi.getTimerCount()).toBe(0);
    expect(await sleeping.result).toBe(reason);
  });

  it("treats NaN and negative waits as 0", async () => {
    vi.useFakeTimers();
    const nan = settle(sleep(Number.NaN));
    const negative = settle(sleep(-5));
    await vi.advanceTimersByTimeAsync(0);
    expect([nan.state(), negative.state()]).toEqual(["resolved", "resolved"]);
  });
});

describe("sleep (real timers)", () => {
  it("resolves after a short real wait and removes its abort listener", async () => {
    const controller = new AbortController();
    const sleeping = sleep(5, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    await expect(sleeping).resolves.toBeUndefined();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects when aborted during a long wait", async () => {
    const controller = new AbortController();
    const sleeping = sleep(60_000, controller.signal);
    setTimeout(() => controller.abort(new Error("cancelled")), 5);
    await expect(sleeping).rejects.toThrow("cancelled");
  });
});

describe("retry", () => {
  it("returns at once when the first call succeeds", async () => {
    const { fn, calls } = flaky(0);
    const onRetry = vi.fn();
    await expect(retry(fn, constantPolicy({ delayMs: 0 }), { onRetry })).resolves.toBe("ok");
    expect(calls).toEqual([1]);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it("retries until success, numbering attempts from 1", async () => {
    const { fn, calls } = flaky(2);
    const infos: RetryInfo[] = [];
    const result = await retry(fn, constantPolicy({ delayMs: 1 }), { onRetry: (info) => infos.push(info) });
    expect(result).toBe("ok");
    expect(calls).toEqual([1, 2, 3]);
    expect(infos.map((i) => [i.attempt, i.delayMs, (i.error as Error).message, i.serverDirected])).toEqual([
      [1, 1, "failure 1", false],
      [2, 1, "failure 2", false],
    ]);
  });

  it("stops at maxAttempts (the original call included) with the last error", async () => {
    const { fn, calls } = flaky(Infinity);
    await expect(retry(fn, constantPolicy({ delayMs: 0 }), { maxAttempts: 3 })).rejects.toThrow("failure 3");
    expect(calls).toEqual([1, 2, 3]);
  });

  it("maxAttempts 1 never retries", async () => {
    const { fn, calls } = flaky(Infinity);
    await expect(retry(fn, constantPolicy({ delayMs: 0 }), { maxAttempts: 1 })).rejects.toThrow("failure 1");
    expect(calls).toEqual([1]);
  });

  it("stops when shouldRetry says the error is fatal", async () => {
    const { fn, calls } = flaky(Infinity);
    const shouldRetry = vi.fn((_error: unknown, attempt: number) => attempt < 2);
    await expect(retry(fn, constantPolicy({ delayMs: 0 }), { shouldRetry })).rejects.toThrow("failure 2");
    expect(calls).toEqual([1, 2]);
    expect(shouldRetry.mock.calls.map(([error, attempt]) => [(error as Error).message, attempt])).toEqual([
      ["failure 1", 1],
      ["failure 2", 2],
    ]);
  });

  it("follows the google policy: 5 retries with its waits, then the last error", async () => {
    vi.useFakeTimers();
    const { fn, calls } = flaky(Infinity);
    const delays: number[] = [];
    const running = settle(retry(fn, googlePolicy(), { random: seededRandom(99), onRetry: (info) => delays.push(info.delayMs) }));
    await vi.runAllTimersAsync();
    expect(((await running.result) as Error).message).toBe("failure 6");
    expect(calls).toEqual([1, 2, 3, 4, 5, 6]);

    const twin = seededRandom(99);
    expect(delays).toEqual([1, 2, 3, 4, 5].map((n) => nextDelay(googlePolicy(), n, undefined, twin)));
  });

  it("passes each wait on as the previous delay (decorrelated jitter)", async () => {
    vi.useFakeTimers();
    const policy: BackoffPolicy = decorrelatedJitterPolicy({ baseMs: 10, capMs: 1000 });
    const { fn } = flaky(6);
    const delays: number[] = [];
    const running = settle(retry(fn, policy, { random: seededRandom(5), onRetry: (i) => delays.push(i.delayMs) }));
    await vi.runAllTimersAsync();
    expect(await running.result).toBe("ok");

    const twin = seededRandom(5);
    let previous: number | undefined;
    const expected: number[] = [];
    for (let n = 1; n <= 6; n++) {
      previous = nextDelay(policy, n, previous, twin);
      expected.push(previous ?? Number.NaN);
    }
    expect(delays).toEqual(expected);
  });

  it("rejects with the abort reason during a wait and calls fn no more", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const { fn, calls } = flaky(Infinity);
    const running = settle(retry(fn, constantPolicy({ delayMs: 60_000 }), { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(60_000 + 30_000);
    expect(calls).toEqual([1, 2]);
    const reason = new Error("shutdown");
    controller.abort(reason);
    expect(await running.result).toBe(reason);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toEqual([1, 2]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not call fn when the signal is already aborted", async () => {
    const { fn, calls } = flaky(0);
    await expect(retry(fn, constantPolicy(), { signal: AbortSignal.abort(new Error("no")) })).rejects.toThrow("no");
    expect(calls).toEqual([]);
  });

  it("rejects bad options and policies with a RangeError", async () => {
    const { fn, calls } = flaky(0);
    await expect(retry(fn, constantPolicy(), { maxAttempts: 0 })).rejects.toThrow("maxAttempts must be >= 1 (got 0)");
    const bad = { kind: "constant", delayMs: -1 } as const;
    await expect(retry(fn, bad)).rejects.toThrow(RangeError);
    expect(calls).toEqual([]);
  });

  it("gives fn a signal that aborts the call in flight", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const running = retry(
      ({ signal }) =>
        new Promise<string>((_resolve, reject) => {
          seen = signal;
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          controller.abort(new Error("user cancelled"));
        }),
      constantPolicy({ delayMs: 0 }),
      { signal: controller.signal },
    );
    await expect(running).rejects.toThrow("user cancelled");
    expect(seen?.aborted).toBe(true);
  });

  it("gives fn a signal that never aborts when the caller has none", async () => {
    let seen: AbortSignal | undefined;
    await retry(({ signal }) => {
      seen = signal;
      return "ok";
    }, constantPolicy());
    expect(seen).toBeInstanceOf(AbortSignal);
    expect(seen?.aborted).toBe(false);
  });

  it("waits what the server asked (shouldRetry's afterMs) instead of the policy's wait", async () => {
    vi.useFakeTimers();
    const { fn, calls } = flaky(2);
    const infos: RetryInfo[] = [];
    const running = settle(
      retry(fn, constantPolicy({ delayMs: 100 }), {
        shouldRetry: (_error, attempt) => (attempt === 1 ? { retry: true, afterMs: 7_000 } : true),
        onRetry: (info) => infos.push(info),
      }),
    );
    await vi.advanceTimersByTimeAsync(6_999);
    expect(calls).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([1, 2]);
    await vi.runAllTimersAsync();
    expect(await running.result).toBe("ok");
    expect(infos.map((i) => [i.attempt, i.delayMs, i.serverDirected])).toEqual([
      [1, 7_000, true],
      [2, 100, false],
    ]);
  });

  it("honours a retryAfterMs carried by the error, and stops when the server says not to retry", async () => {
    vi.useFakeTimers();
    const waits: number[] = [];
    let calls = 0;
    const running = settle(
      retry(
        () => {
          calls++;
          throw Object.assign(new Error(`busy ${calls}`), { retryAfterMs: calls === 1 ? 2_000 : -1 });
        },
        constantPolicy({ delayMs: 100 }),
        { onRetry: (info) => waits.push(info.delayMs) },
      ),
    );
    await vi.runAllTimersAsync();
    expect(((await running.result) as Error).message).toBe("busy 2");
    expect(waits).toEqual([2_000]);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  it.each([
    ["120", 120_000],
    ["0", 0],
    [" 5 ", 5_000],
    ["Wed, 21 Oct 2015 07:28:30 GMT", 30_000],
    ["Wed, 21 Oct 2015 07:00:00 GMT", 0],
  ])("%j -> %d ms", (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
  it.each([null, undefined, "", "-1", "1.5", "soon", "2015-10-21T07:28:30Z"])("%j -> undefined", (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

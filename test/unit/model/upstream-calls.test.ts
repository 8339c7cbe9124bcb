import { describe, expect, it } from "vitest";
import { retryBudget } from "../../../src/backoff/budget.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import type { AttemptSink, Transport } from "../../../src/model/attempt.ts";
import type { RetryConfig } from "../../../src/model/client-loop.ts";
import { type AttemptResult, OK_RESULT } from "../../../src/model/outcome.ts";
import { DEFAULT_THREAD_POOL } from "../../../src/model/servers/queue.ts";
import type { Completion } from "../../../src/model/servers/server-model.ts";
import { UpstreamPool } from "../../../src/model/servers/upstream-pool.ts";
import { type DeadlineCarrier, UpstreamCalls } from "../../../src/model/upstream-calls.ts";
import { retryConfig } from "../../helpers/retry-config.ts";

const ERROR_RESULT: AttemptResult = { outcome: "error", errorKind: "http-5xx" };

/** An upstream that answers each attempt after `latencyMs` with what `answer` says; it records sends and aborts. */
function scriptedUpstream(clock: ManualClock, name: string, log: string[], answer: (attempt: number) => AttemptResult, latencyMs = 10) {
  let sent = 0;
  const transport: Transport<{ cancelled: boolean }> = {
    send(sink: AttemptSink) {
      const attempt = ++sent;
      const carried = (sink as unknown as DeadlineCarrier).carriedDeadline;
      log.push(`${name}#${attempt}@${clock.now()}${Number.isFinite(carried) ? ` carrying ${carried}` : ""}`);
      const handle = { cancelled: false };
      clock.schedule(latencyMs, () => {
        if (!handle.cancelled) sink.done(answer(attempt));
      });
      return handle;
    },
    abort(handle) {
      if (handle.cancelled) return;
      handle.cancelled = true;
      log.push(`${name} aborted@${clock.now()}`);
    },
  };
  return transport;
}

function setUp(targets: (clock: ManualClock, log: string[]) => Transport[], retry: RetryConfig, carried?: number) {
  const clock = new ManualClock();
  const log: string[] = [];
  const calls = new UpstreamCalls(clock, seededRandom(4), {
    timeoutMs: 1000,
    retry,
    targets: targets(clock, log),
    maxCalls: 100,
    carriedDeadline: () => carried,
  });
  const pool = new UpstreamPool(
    clock,
    { ...DEFAULT_THREAD_POOL, threads: 4, serviceTimeMs: 5, cancelOnDisconnect: false, random: seededRandom(1) },
    calls,
  );
  calls.reportTo(pool);
  const completions: string[] = [];
  const arrive = (name: string, deadlineAt?: number) =>
    pool.admit((context: string, completion: Completion) => completions.push(`${context}:${completion}@${clock.now()}`), name, deadlineAt);
  return { clock, log, pool, calls, completions, arrive };
}

describe("UpstreamCalls (a middle tier's calls, with its own retry policy, on the shared attempt lifecycle)", () => {
  it("retries a failing upstream as its policy says, then fails the request for good (a 502)", () => {
    const { clock, log, pool, completions, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => ERROR_RESULT)],
      retryConfig({ maxAttempts: 3 }),
    );
    arrive("a");
    clock.advanceBy(1000);
    // 10 ms each attempt, fixed 100 ms between them; the third failure ends the call at 230.
    expect(log).toEqual(["db#1@0", "db#2@110", "db#3@220"]);
    expect(completions).toEqual(["a:upstream-failed@230"]);
    expect(pool.snapshot().upstream).toMatchObject({ requests: 1, attempts: 3, attemptsError: 3, failures: 1, inFlight: 0 });
  });

  it("succeeds after a retry, then spends its own service time", () => {
    const { clock, log, completions, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, (attempt) => (attempt === 1 ? ERROR_RESULT : OK_RESULT))],
      retryConfig({ maxAttempts: 3 }),
    );
    arrive("a");
    clock.advanceBy(1000);
    expect(log).toEqual(["db#1@0", "db#2@110"]);
    expect(completions).toEqual(["a:served@125"]);
  });

  it("fans out to every target; answers when all succeeded, and fails at the first leg that fails for good, cancelling the rest", () => {
    const ok = setUp(
      (clock, log) => [scriptedUpstream(clock, "x", log, () => OK_RESULT, 10), scriptedUpstream(clock, "y", log, () => OK_RESULT, 30)],
      retryConfig({ maxAttempts: 1 }),
    );
    ok.arrive("a");
    ok.clock.advanceBy(100);
    expect(ok.completions).toEqual(["a:served@35"]);
    expect(ok.pool.snapshot().upstream).toMatchObject({ requests: 2, attempts: 2, attemptsOk: 2 });

    const failing = setUp(
      (clock, log) => [scriptedUpstream(clock, "x", log, () => ERROR_RESULT, 10), scriptedUpstream(clock, "y", log, () => OK_RESULT, 30)],
      retryConfig({ maxAttempts: 1 }),
    );
    failing.arrive("a");
    failing.clock.advanceBy(100);
    expect(failing.log).toEqual(["x#1@0", "y#1@0", "y aborted@10"]);
    expect(failing.completions).toEqual(["a:upstream-failed@10"]);
    expect(failing.calls.inFlight).toBe(0);
  });

  it("carries the request's deadline down, and a deadline-aware tier makes no attempt at or after it", () => {
    const { clock, log, pool, completions, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => ERROR_RESULT)],
      retryConfig({ maxAttempts: 5 }),
      1_700_000_000_150,
    );
    arrive("a", 150); // on the pool's clock: after the second attempt's end (120), before the third (220)
    clock.advanceBy(1000);
    expect(log).toEqual(["db#1@0 carrying 1700000000150", "db#2@110 carrying 1700000000150"]);
    expect(completions).toEqual(["a:expired@220"]);
    expect(pool.snapshot()).toMatchObject({ expired: 1, upstream: { attempts: 2, failures: 0 } });
  });

  it("stops retrying when its retry budget is spent: one client instance for every call of the tier", () => {
    const { clock, pool, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => ERROR_RESULT)],
      retryConfig({
        maxAttempts: 3,
        fleet: {
          instances: 0,
          budget: { kind: "grpc", budget: retryBudget({ maxTokens: 3, tokenRatio: 0.1 }) },
          throttle: undefined,
          breaker: undefined,
        },
      }),
    );
    for (const name of ["a", "b", "c", "d"]) arrive(name);
    clock.advanceBy(2000);
    // gRPC throttling: a retry only while the tokens are above half the ceiling (1.5 of 3), each failure
    // costing one: a's failure leaves 2 (a retries), b's 1, c's and d's 0 (no retry), a's retry fails too.
    expect(pool.snapshot().upstream).toMatchObject({ requests: 4, attempts: 5, failures: 4 });
  });

  it("hedges with -upstream-hedge-delay: a second copy at the delay, the first answer kept, the other aborted, both carrying the deadline", () => {
    const { clock, log, pool, completions, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => OK_RESULT, 100)],
      retryConfig({ maxAttempts: 2, hedgeDelayMs: 30 }),
      1_700_000_000_500,
    );
    arrive("a");
    clock.advanceBy(1000);
    expect(log).toEqual(["db#1@0 carrying 1700000000500", "db#2@30 carrying 1700000000500", "db aborted@100"]);
    expect(completions).toEqual(["a:served@105"]);
    expect(pool.snapshot().upstream).toMatchObject({ requests: 1, attempts: 2, attemptsOk: 1, inFlight: 0 });
  });

  it("hedges beside its retry budget (-upstream-hedge-delay with -upstream-budget grpc): no hedge once the tokens are at half", () => {
    const { clock, log, pool, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => ERROR_RESULT, 5)],
      retryConfig({
        maxAttempts: 3,
        hedgeDelayMs: 30,
        fleet: { instances: 0, budget: { kind: "grpc", budget: retryBudget({ maxTokens: 3 }) }, throttle: undefined, breaker: undefined },
      }),
    );
    for (const name of ["a", "b"]) arrive(name);
    clock.advanceBy(2000);
    // Every copy fails (a 5xx: the next at once). a's and b's first copies go at 0 (a first copy always does); a's failure
    // leaves 2 tokens (> 1.5): its hedge goes at 5; b's leaves 1: no hedge for b; a's hedge fails, leaves 0: no third copy.
    expect(log).toEqual(["db#1@0", "db#2@0", "db#3@5"]);
    expect(pool.snapshot().upstream).toMatchObject({ requests: 2, attempts: 3, attemptsError: 3, failures: 2, inFlight: 0 });
  });

  it("cancels the attempt in flight when the request's client leaves with cancel-on-disconnect, or the pool crashes", () => {
    const { clock, log, pool, completions, arrive } = setUp(
      (clock, log) => [scriptedUpstream(clock, "db", log, () => OK_RESULT, 50)],
      retryConfig({ maxAttempts: 1 }),
    );
    arrive("a");
    arrive("b");
    clock.advanceBy(20);
    expect(pool.crash()).toEqual(["a", "b"]);
    expect(log).toEqual(["db#1@0", "db#2@0", "db aborted@20", "db aborted@20"]);
    clock.advanceBy(100);
    expect(completions).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { Timer } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { Herd, type Transport } from "../../../src/model/herd.ts";
import { type AttemptResult, OK_RESULT, TOO_MANY_REQUESTS_RESULT } from "../../../src/model/outcome.ts";
import { type FleetConfig, NO_FLEET_PROTECTION } from "../../../src/model/client-instances.ts";
import { retryBudget } from "../../../src/backoff/budget.ts";
import { consecutiveBreaker } from "../../../src/backoff/circuit-breaker.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { retryConfig } from "../../helpers/retry-config.ts";
import { resolveRetryPolicy } from "../../../src/config/load.ts";
import { parseSimArgs } from "../../../src/options/sim.ts";

const SHED: AttemptResult = { outcome: "error", errorKind: "http-5xx" };
const BAD_REQUEST: AttemptResult = { outcome: "error", errorKind: "http-4xx" };

/** A transport on the manual clock whose n-th attempt answers `script[n]` after its latency; unanswered past the script. */
function scriptedTransport(clock: ManualClock, script: ReadonlyArray<readonly [number, AttemptResult]>) {
  const sentAt: number[] = [];
  const abortedAt: number[] = [];
  const transport: Transport<{ timer: Timer | undefined; index: number }> = {
    send(sink) {
      const index = sentAt.length;
      sentAt.push(clock.now());
      const step = script[index];
      return { timer: step === undefined ? undefined : clock.schedule(step[0], () => sink.done(step[1])), index };
    },
    abort(attempt) {
      abortedAt[attempt.index] = clock.now();
      if (attempt.timer !== undefined) clock.cancel(attempt.timer);
    },
  };
  return { transport, sentAt, abortedAt };
}

const THINK_MS = 1e9;

/** One user hedging with `delayMs` and `maxAttempts` copies; the run covers its first request (it then thinks for ~forever). */
function hedgedRequest(
  script: ReadonlyArray<readonly [number, AttemptResult]>,
  delayMs = 30,
  maxAttempts = 3,
  fleet?: Partial<FleetConfig>,
) {
  const clock = new ManualClock();
  const { transport, sentAt, abortedAt } = scriptedTransport(clock, script);
  const stats = new WindowStats(0);
  const protection = fleet === undefined ? {} : { fleet: { ...NO_FLEET_PROTECTION, instances: 1, ...fleet } };
  const retry = retryConfig({ hedgeDelayMs: delayMs, maxAttempts, thinkTimeMeanMs: THINK_MS, ...protection });
  const herd = new Herd(clock, seededRandom(3), transport, stats, { users: 1, timeoutMs: 1000, retry });
  herd.start();
  // The user's first wait is its first draw; its next request comes a think time (~1e9 ms) after this one.
  const first = seededRandom(3).exponential(THINK_MS);
  clock.runUntil(first + 10_000);
  const relative = (times: number[]) => times.map((time) => (time === undefined ? undefined : time - first));
  return { sent: relative(sentAt), aborted: relative(abortedAt), counts: stats.totals(clock.now()).counts, inFlight: herd.inFlight };
}

describe("hedging in the attempt lifecycle, on a manual clock", () => {
  it("sends the second copy at the hedge delay, keeps its answer and cancels the first", () => {
    const { sent, aborted, counts, inFlight } = hedgedRequest([
      [100, OK_RESULT],
      [10, OK_RESULT],
    ]);
    // The second copy goes out at 30 ms and answers at 40 ms: the third is never sent.
    expect(sent).toEqual([0, 30]);
    expect(aborted[0]).toBe(40);
    expect(aborted[1]).toBeUndefined();
    expect(counts).toMatchObject({ attempts: 2, retries: 1, ok: 1, errors: 0, timedout: 0, gaveUp: 0 });
    expect(inFlight).toBe(0);
  });

  it("keeps the first answer when the first copy answers before the second", () => {
    const { sent, aborted, counts } = hedgedRequest([
      [50, OK_RESULT],
      [100, OK_RESULT],
    ]);
    expect(sent).toEqual([0, 30]);
    expect(aborted[1]).toBe(50);
    expect(counts).toMatchObject({ attempts: 2, ok: 1, errors: 0 });
  });

  it("sends no copy when the first answers within the delay", () => {
    const { sent, aborted, counts } = hedgedRequest([[20, OK_RESULT]]);
    expect(sent).toEqual([0]);
    expect(aborted).toEqual([]);
    expect(counts).toMatchObject({ attempts: 1, retries: 0, ok: 1 });
  });

  it("sends the next copy at once after a non-fatal failure, then the one after at the delay", () => {
    const { sent, counts } = hedgedRequest([
      [10, SHED],
      [500, OK_RESULT],
      [5, OK_RESULT],
    ]);
    // 10 ms: the 503 shortcuts the delay; 40 ms: the delay after the second copy.
    expect(sent).toEqual([0, 10, 40]);
    expect(counts).toMatchObject({ attempts: 3, ok: 1, errors: 1 });
  });

  it("ends the request on a fatal failure and cancels the other copies", () => {
    const { sent, aborted, counts } = hedgedRequest([
      [100, OK_RESULT],
      [20, BAD_REQUEST],
    ]);
    expect(sent).toEqual([0, 30]);
    expect(aborted[0]).toBe(50);
    expect(counts).toMatchObject({ attempts: 2, ok: 0, errors: 1, gaveUp: 1 });
  });

  it("gives up, never retries, once every copy failed; a copy's own timeout is non-fatal", () => {
    const { sent, counts, inFlight } = hedgedRequest([
      [10, SHED],
      [10, SHED],
    ]);
    // Copy 3 is never answered: its own deadline (1 s) ends it, and with it the request.
    expect(sent).toEqual([0, 10, 20]);
    expect(counts).toMatchObject({ attempts: 3, retries: 2, ok: 0, errors: 2, timedout: 1, gaveUp: 1 });
    expect(inFlight).toBe(0);
  });

  it("takes a 429 as non-fatal, as gRPC maps it to UNAVAILABLE: the next copy goes out at once", () => {
    const { sent, counts } = hedgedRequest([
      [10, TOO_MANY_REQUESTS_RESULT],
      [5, OK_RESULT],
    ]);
    expect(sent).toEqual([0, 10]);
    expect(counts).toMatchObject({ attempts: 2, ok: 1, errors: 1, gaveUp: 0 });
  });
});

describe("hedging beside the client's protections, on a manual clock", () => {
  it("withholds a hedge while gRPC's retry budget is at its threshold (A6), and fails the request when nothing else is in flight", () => {
    // 4 tokens, threshold 2: each failed copy costs one. Copy 1 fails (3 left): copy 2 goes; it fails (2 left): copy 3 is withheld.
    const script = [[10, SHED] as const, [10, SHED] as const, [10, OK_RESULT] as const];
    const budgeted = hedgedRequest(script, 30, 3, { budget: { kind: "grpc", budget: retryBudget({ maxTokens: 4 }) } });
    expect(budgeted.sent).toEqual([0, 10]);
    expect(budgeted.counts).toMatchObject({ attempts: 2, errors: 2, ok: 0, gaveUp: 1, throttled: 0, rejected: 0 });
    expect(budgeted.inFlight).toBe(0);
    // Without the budget the third copy goes and succeeds.
    const free = hedgedRequest(script, 30, 3);
    expect(free.sent).toEqual([0, 10, 20]);
    expect(free.counts).toMatchObject({ attempts: 3, ok: 1, gaveUp: 0 });
  });

  it("sends no hedge through an open circuit breaker (Polly v8, failsafe-go: each hedged attempt through the breaker)", () => {
    // The breaker opens at the first failure. Copy 1 is slow; copy 2 fails at 35 ms and opens it: copy 3 is refused, copy 1 kept.
    const breaker = { breaker: consecutiveBreaker({ failureThreshold: 1, breakMs: 10_000 }) };
    const { sent, aborted, counts } = hedgedRequest(
      [
        [100, OK_RESULT],
        [5, SHED],
        [5, OK_RESULT],
      ],
      30,
      3,
      breaker,
    );
    expect(sent).toEqual([0, 30]);
    expect(aborted).toEqual([]);
    expect(counts).toMatchObject({ attempts: 2, ok: 1, errors: 1, rejected: 1, gaveUp: 0 });
    // Without the breaker the failure sends copy 3 at once, and its answer at 40 ms is kept.
    const free = hedgedRequest(
      [
        [100, OK_RESULT],
        [5, SHED],
        [5, OK_RESULT],
      ],
      30,
      3,
    );
    expect(free.sent).toEqual([0, 30, 35]);
    expect(free.counts).toMatchObject({ attempts: 3, ok: 1, rejected: 0 });
  });

  it("fails the request when the breaker refuses its only remaining chance: the failure is kept, the refusal counted", () => {
    const breaker = { breaker: consecutiveBreaker({ failureThreshold: 1, breakMs: 10_000 }) };
    const { sent, counts, inFlight } = hedgedRequest([[10, SHED]], 30, 3, breaker);
    expect(sent).toEqual([0]);
    expect(counts).toMatchObject({ attempts: 1, errors: 1, rejected: 1, gaveUp: 1 });
    expect(inFlight).toBe(0);
  });
});

describe("the protections a hedging policy takes (the client's, a middle tier's and the simulator's one resolution)", () => {
  const resolve = (args: readonly string[]) => {
    const parsed = parseSimArgs(["-hedge-delay", "50ms", "-max-attempts", "3", ...args]);
    if (parsed.kind !== "run") throw new Error("no help asked");
    return resolveRetryPolicy(parsed.values);
  };

  it("takes gRPC's budget, a circuit breaker and the adaptive throttle", () => {
    for (const args of [
      ["-budget", "grpc"],
      ["-breaker", "consecutive"],
      ["-breaker", "sampling"],
      ["-throttle", "sre"],
    ]) {
      expect(resolve(args).retry.hedgeDelayMs).toBe(50);
    }
  });

  it("refuses the budgets and retry breakers that define nothing for copies in flight together, naming the flag", () => {
    for (const kind of ["envoy", "finagle", "aws", "yandex", "brooker"]) {
      expect(() => resolve(["-budget", kind])).toThrow(new RegExp(`-hedge-delay cannot be combined with -budget ${kind}`));
    }
    expect(() => resolve(["-breaker", "yandex-retry"])).toThrow(/-hedge-delay cannot be combined with -breaker yandex-retry/);
  });
});

import { describe, expect, it } from "vitest";
import type { Timer } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { Herd, type Transport } from "../../../src/model/herd.ts";
import { type AttemptResult, OK_RESULT } from "../../../src/model/outcome.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { retryConfig } from "../../helpers/retry-config.ts";

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
function hedgedRequest(script: ReadonlyArray<readonly [number, AttemptResult]>, delayMs = 30, maxAttempts = 3) {
  const clock = new ManualClock();
  const { transport, sentAt, abortedAt } = scriptedTransport(clock, script);
  const stats = new WindowStats(0);
  const retry = retryConfig({ hedgeDelayMs: delayMs, maxAttempts, thinkTimeMeanMs: THINK_MS });
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
});

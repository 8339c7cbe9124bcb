import { describe, expect, it } from "vitest";
import { exponentialPolicy, tablePolicy } from "../../../src/backoff/index.ts";
import { type Timer, type WarmableOwner, warmOwner } from "../../../src/clock/clock.ts";
import { Herd, type Transport } from "../../../src/model/herd.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { type AttemptResult, OK_RESULT } from "../../../src/model/outcome.ts";
import { seededRandom, streamRandom } from "../../../src/backoff/random.ts";
import { partOf } from "../../../src/client/shard.ts";
import { mergeWindowReports } from "../../../src/model/window-merge.ts";
import { retryConfig } from "../../helpers/retry-config.ts";
import { decideAfterAttempt, firstWait } from "../../../src/model/client-loop.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";

const REFUSED: AttemptResult = { outcome: "error", errorKind: "refused" };

/** A transport on the manual clock that answers each attempt with `result` after `latencyMs`. */
function scriptedTransport(clock: ManualClock, latencyMs: number, result: AttemptResult | undefined) {
  const sentAt: number[] = [];
  let aborted = 0;
  const transport: Transport<Timer | undefined> = {
    send(sink) {
      sentAt.push(clock.now());
      return result === undefined ? undefined : clock.schedule(latencyMs, () => sink.done(result));
    },
    abort(timer: Timer | undefined) {
      aborted++;
      if (timer !== undefined) clock.cancel(timer);
    },
  };
  return { transport, sentAt, aborted: () => aborted };
}

describe("Herd", () => {
  it("retries a failing server at the fixed interval after each answer", () => {
    const clock = new ManualClock();
    const { transport, sentAt } = scriptedTransport(clock, 5, REFUSED);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(1), transport, stats, { users: 1, timeoutMs: 2000, retry: retryConfig() });
    herd.start();
    clock.runUntil(60_000);
    const first = sentAt[0]!;
    expect(first).toBe(seededRandom(1).exponential(10_000));
    const gaps = sentAt.slice(1, 6).map((time, index) => time - sentAt[index]!);
    for (const gap of gaps) expect(gap).toBeCloseTo(105, 9);
    expect(stats.totals(clock.now()).counts).toMatchObject({
      errors: sentAt.length - herd.inFlight,
      errorKinds: { refused: sentAt.length - herd.inFlight },
    });
  });

  it("gives the code that reads users ahead each user's own times row", () => {
    // warmOwner reads a user's row from its herd's context: the first element is the user's last
    // wait, which on the manual clock is, at its first attempt, the instant it went out.
    const clock = new ManualClock();
    const readAhead: [number, number][] = [];
    const transport: Transport = {
      send(sink) {
        readAhead.push([warmOwner(sink as WarmableOwner), clock.now()]);
        return undefined;
      },
      abort() {},
    };
    const herd = new Herd(clock, seededRandom(3), transport, new WindowStats(0), { users: 5, timeoutMs: 60_000, retry: retryConfig() });
    herd.start();
    while (readAhead.length < 5) clock.runUntil(clock.nextDueAt()!);
    for (const [read, sentAt] of readAhead) expect(read).toBe(sentAt);
    expect(new Set(readAhead.map(([read]) => read)).size).toBe(5);
  });

  it("times out an unanswered attempt, aborts it, and retries after the table's wait", () => {
    const clock = new ManualClock();
    const { transport, sentAt, aborted } = scriptedTransport(clock, 0, undefined);
    const stats = new WindowStats(0);
    const retry = retryConfig({ backoff: tablePolicy({ delaysMs: [0, 10, 20, 40] }) });
    const herd = new Herd(clock, seededRandom(2), transport, stats, { users: 1, timeoutMs: 2000, retry });
    herd.start();
    while (sentAt.length === 0) clock.runUntil(clock.now() + 1_000);
    clock.runUntil(clock.now() + 20_000);
    expect(sentAt.length).toBeGreaterThan(4);
    // Table jitter: a wait for entry m lies in [m/2, 1.5m); the gap adds the 2 s timeout.
    const gaps = sentAt.slice(1, 5).map((time, index) => time - sentAt[index]! - 2000);
    const entries = [10, 20, 40, 40];
    gaps.forEach((gap, index) => {
      expect(gap).toBeGreaterThanOrEqual(entries[index]! / 2);
      expect(gap).toBeLessThan(entries[index]! * 1.5);
    });
    expect(aborted()).toBe(sentAt.length - herd.inFlight);
    expect(stats.totals(clock.now()).counts.timedout).toBe(aborted());
  });

  it("waits at least what the server's Retry-After asks before the next attempt, when told to honor it", () => {
    const gapsAfter = (retryAfterMs: number, honorRetryAfter: boolean) => {
      const clock = new ManualClock();
      const shed: AttemptResult = { outcome: "error", errorKind: "http-5xx", retryAfterMs };
      const { transport, sentAt } = scriptedTransport(clock, 5, shed);
      const herd = new Herd(clock, seededRandom(6), transport, new WindowStats(0), {
        users: 1,
        timeoutMs: 2000,
        retry: retryConfig({ honorRetryAfter }),
      });
      herd.start();
      clock.runUntil(120_000);
      return sentAt.slice(1, 6).map((time, index) => time - sentAt[index]!);
    };
    // The answer takes 5 ms; then the wait: the server's 2 s rather than the policy's 100 ms.
    for (const gap of gapsAfter(2_000, true)) expect(gap).toBeCloseTo(2_005, 9);
    // A policy that waits longer than the server asks keeps its own wait.
    for (const gap of gapsAfter(50, true)) expect(gap).toBeCloseTo(105, 9);
    for (const gap of gapsAfter(2_000, false)) expect(gap).toBeCloseTo(105, 9);
  });

  it("offers N / (lambda + latency) requests per second, without drift, over an hour", () => {
    const clock = new ManualClock();
    const { transport, sentAt } = scriptedTransport(clock, 100, OK_RESULT);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(3), transport, stats, { users: 1000, timeoutMs: 2000, retry: retryConfig() });
    herd.start();
    clock.runUntil(600_000); // warm-up: the first waits are all think times
    const before = sentAt.length;
    clock.runUntil(4_200_000);
    const rate = (sentAt.length - before) / 3600;
    expect(rate).toBeGreaterThan((1000 / 10.1) * 0.99);
    expect(rate).toBeLessThan((1000 / 10.1) * 1.01);
  });

  it("reports each request's start and end, from its first attempt, retries and waits included, and whether it was retried", () => {
    const clock = new ManualClock();
    const script: AttemptResult[] = [REFUSED, REFUSED, OK_RESULT, REFUSED, REFUSED, REFUSED, OK_RESULT];
    const transport: Transport = {
      send: (sink) => clock.schedule(5, () => sink.done(script.shift() ?? OK_RESULT)),
      abort: () => {},
    };
    const stats = new WindowStats(0);
    const ended: { ok: boolean; latencyMs: number; retried: boolean }[] = [];
    let started = 0;
    const observer = {
      attemptStarted: (isRetry: boolean) => stats.attemptStarted(isRetry),
      attemptNotSent: (isRetry: boolean) => stats.attemptNotSent(isRetry),
      attemptEnded: (result: AttemptResult, latencyMs: number) => stats.attemptEnded(result, latencyMs),
      gaveUp: () => stats.gaveUp(),
      attemptRefused: () => {},
      requestEnded: (ok: boolean, latencyMs: number, retried: boolean) => ended.push({ ok, latencyMs, retried }),
      requestStarted: () => started++,
    };
    const herd = new Herd(clock, seededRandom(6), transport, observer, {
      users: 1,
      timeoutMs: 2000,
      retry: retryConfig({ maxAttempts: 3 }),
    });
    herd.start();
    while (ended.length < 3) clock.runUntil(clock.now() + 1_000);
    herd.stop();
    // Fixed 100 ms waits, 5 ms answers: two failures then an OK; three failures and the request is
    // given up (three attempts at most); then an OK at the first attempt.
    expect(ended.map((entry) => entry.ok)).toEqual([true, false, true]);
    expect(ended[0]!.latencyMs).toBeCloseTo(5 + 100 + 5 + 100 + 5, 9);
    expect(ended[1]!.latencyMs).toBeCloseTo(5 + 100 + 5 + 100 + 5, 9);
    expect(ended[2]!.latencyMs).toBeCloseTo(5, 9);
    expect(ended.map((entry) => entry.retried)).toEqual([true, true, false]);
    expect(started).toBeGreaterThanOrEqual(3); // the fourth request may have started before the loop stopped
    expect(started).toBeLessThanOrEqual(4);
    expect(stats.totals(clock.now()).counts).toMatchObject({ ok: 2, gaveUp: 1, attempts: 7, retries: 4 });
  });

  it("keeps a long run of failures, the retry flag and the policy's waits exactly as the client loop computes them", () => {
    // 40 failures in a row (the count is kept above the attempt cycle's flag bits), an OK, then 5 more failures.
    const outcomes: AttemptResult[] = [...Array<AttemptResult>(40).fill(REFUSED), OK_RESULT, ...Array<AttemptResult>(5).fill(REFUSED)];
    const clock = new ManualClock();
    const sent: { at: number; isRetry: boolean }[] = [];
    const transport: Transport<Timer> = {
      send: (sink) => {
        const result = outcomes[sent.length - 1] ?? OK_RESULT;
        return clock.schedule(5, () => sink.done(result));
      },
      abort: (timer) => clock.cancel(timer),
    };
    const stats = new (class extends WindowStats {
      override attemptStarted(isRetry: boolean, latenessMs: number): void {
        sent.push({ at: clock.now(), isRetry });
        super.attemptStarted(isRetry, latenessMs);
      }
    })(0);
    // Each wait grows with the failure count, so a count lost or cut short shows in the send times.
    const retry = retryConfig({ backoff: exponentialPolicy({ minDelayMs: 10, factor: 1.1, maxDelayMs: 60_000, jitter: 0.1 }) });
    const herd = new Herd(clock, seededRandom(9), transport, stats, { users: 1, timeoutMs: 2000, retry });
    herd.start();
    while (sent.length < outcomes.length) clock.runUntil(clock.now() + 1_000);

    // The same pure loop, driven by hand with the same random stream, says when each attempt goes out.
    const random = seededRandom(9);
    const state = { failures: 0, lastWaitMs: 0 };
    let at = firstWait(retry, state, random);
    const expected = [{ at, isRetry: false }];
    let mostFailures = 0;
    for (const result of outcomes.slice(0, outcomes.length - 1)) {
      const decision = decideAfterAttempt(retry, state, result.outcome, random);
      mostFailures = Math.max(mostFailures, state.failures);
      at += 5 + state.lastWaitMs;
      expected.push({ at, isRetry: decision === "retry" });
    }
    expect(mostFailures).toBe(40);
    const first = sent.slice(0, expected.length);
    expect(first.map((attempt) => attempt.isRetry)).toEqual(expected.map((attempt) => attempt.isRetry));
    first.forEach((attempt, index) => expect(attempt.at).toBeCloseTo(expected[index]!.at, 6));
  });

  it("stops every wait and attempt, and counts nothing afterwards", () => {
    const clock = new ManualClock();
    const { transport, sentAt, aborted } = scriptedTransport(clock, 500, OK_RESULT);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(4), transport, stats, {
      users: 200,
      timeoutMs: 2000,
      retry: retryConfig({ thinkTimeMeanMs: 100 }),
    });
    herd.start();
    clock.runUntil(1_000);
    const inFlight = herd.inFlight;
    expect(inFlight).toBeGreaterThan(0);
    const counted = stats.totals(clock.now()).counts.ok;
    herd.stop();
    expect(aborted()).toBe(inFlight);
    expect(herd.inFlight).toBe(0);
    const sent = sentAt.length;
    clock.runUntil(60_000);
    expect(sentAt.length).toBe(sent);
    expect(stats.totals(clock.now()).counts.ok).toBe(counted);
    expect(clock.nextDueAt()).toBeUndefined();
  });
});

describe("WindowStats", () => {
  it("puts every attempt in exactly one window; the windows add up to the totals", () => {
    const clock = new ManualClock();
    const { transport } = scriptedTransport(clock, 50, OK_RESULT);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(5), transport, stats, {
      users: 300,
      timeoutMs: 2000,
      retry: retryConfig({ thinkTimeMeanMs: 1000 }),
    });
    herd.start();
    let ok = 0;
    let attempts = 0;
    for (let end = 5_000; end <= 60_000; end += 5_000) {
      clock.runUntil(end);
      const window = stats.closeWindow(end);
      expect(window.endMs - window.startMs).toBe(5_000);
      ok += window.counts.ok;
      attempts += window.counts.attempts;
    }
    const totals = stats.totals(60_000);
    expect(ok).toBe(totals.counts.ok);
    expect(attempts).toBe(totals.counts.attempts);
    expect(totals.latency?.p50Ms).toBeCloseTo(50, 1);
  });

  it("gives the same windows split into parts as in one herd against a server that always answers OK", () => {
    const users = 30;
    const retry = retryConfig({ thinkTimeMeanMs: 200 });
    const run = (parts: number) => {
      const clock = new ManualClock();
      const stats = Array.from({ length: parts }, (_, index) => {
        const range = partOf({ firstUser: 0, users }, index, parts);
        const { transport } = scriptedTransport(clock, 2, OK_RESULT);
        const windowStats = new WindowStats(0);
        new Herd(clock, { randomFor: (user) => streamRandom(4, user) }, transport, windowStats, {
          users: range.users,
          firstUser: range.firstUser,
          timeoutMs: 2000,
          retry,
        }).start();
        return windowStats;
      });
      const windows = [];
      for (let end = 500; end <= 2_000; end += 500) {
        clock.runUntil(end);
        windows.push(mergeWindowReports(stats.map((part) => part.closeWindow(end))));
      }
      return windows;
    };
    const one = run(1);
    const four = run(4);
    expect(four.map((window) => window.counts)).toEqual(one.map((window) => window.counts));
    expect(four.map((window) => window.latency)).toEqual(one.map((window) => window.latency));
    expect(one.reduce((sum, window) => sum + window.counts.ok, 0)).toBeGreaterThan(200);
  });
});

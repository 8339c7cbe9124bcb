import { describe, expect, it } from "vitest";
import { consecutiveBreaker } from "../../../src/backoff/circuit-breaker.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import type { Clock, Timer, TimerOwner } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { behindReason, defaultBehindThresholdMs, worstDelay } from "../../../src/model/client-behind.ts";
import { NOT_SENT_WAIT_MS, type AttemptSink, type Transport } from "../../../src/model/attempt.ts";
import { NO_FLEET_PROTECTION } from "../../../src/model/client-instances.ts";
import { Herd } from "../../../src/model/herd.ts";
import { OpenLoop } from "../../../src/model/open-loop.ts";
import { classifyStatus, OK_RESULT } from "../../../src/model/outcome.ts";
import { mergeWindowReports } from "../../../src/model/window-merge.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { retryConfig } from "../../helpers/retry-config.ts";

/**
 * A manual clock whose timers fire late on purpose: its timers are due on the manual clock,
 * but `now()` reads `lagMs` later, as a busy event loop reads the time when it finally runs
 * a timer. Setting `lagMs` before the due instant makes that firing exactly that late.
 */
class LateClock implements Clock {
  readonly manual = new ManualClock();
  lagMs = 0;
  now(): number {
    return this.manual.now() + this.lagMs;
  }
  schedule(delayMs: number, callback: () => void): Timer {
    return this.manual.schedule(delayMs, callback);
  }
  arm(owner: TimerOwner, delayMs: number): void {
    this.manual.arm(owner, delayMs);
  }
  cancel(timer: Timer | TimerOwner): void {
    this.manual.cancel(timer);
  }
}

/** Answers OK at once, or says "not sent" for the first `notSent` attempts. */
function instantTransport(clock: Clock, notSent = 0): Transport & { sentAt: number[] } {
  const sentAt: number[] = [];
  let refusals = notSent;
  return {
    sentAt,
    send(sink: AttemptSink) {
      sentAt.push(clock.now());
      if (refusals > 0) {
        refusals--;
        sink.notSent();
        return undefined;
      }
      sink.done(OK_RESULT);
      return undefined;
    },
    abort() {},
  };
}

/** Keeps every sink: the first attempt gets no answer, the second is not sent, every later one is answered OK at once. */
function secondNotSentTransport(): { transport: Transport; sinks: AttemptSink[] } {
  const sinks: AttemptSink[] = [];
  const transport: Transport = {
    send(sink) {
      sinks.push(sink);
      if (sinks.length === 2) sink.notSent();
      else if (sinks.length > 2) sink.done(OK_RESULT);
      return undefined;
    },
    abort() {},
  };
  return { transport, sinks };
}

describe("lateness: the actual send instant against the planned one", () => {
  it("summarizes the lateness recorded in a window: p50, p99 and the exact maximum", () => {
    const stats = new WindowStats(0);
    for (let index = 0; index < 98; index++) stats.attemptStarted(false, 0);
    stats.attemptStarted(false, 40);
    stats.attemptStarted(true, 1234.5);
    const window = stats.closeWindow(5_000);
    expect(window.lateness).toEqual({ p50Ms: 0, p99Ms: expect.closeTo(40, 1) as number, maxMs: 1234.5 });
    expect(window.latenessHistogram?.totalCount).toBe(100);
    // A window in which nothing was sent has no lateness; the run's totals keep every attempt.
    expect(stats.closeWindow(10_000).lateness).toBeUndefined();
    expect(stats.totals(10_000).lateness?.maxMs).toBe(1234.5);
  });

  it("merges lateness across herds from the histograms, with the exact maximum", () => {
    const a = new WindowStats(0);
    const b = new WindowStats(0);
    for (let index = 0; index < 60; index++) a.attemptStarted(false, 10);
    for (let index = 0; index < 40; index++) b.attemptStarted(false, 300);
    b.attemptStarted(false, 777.25);
    const merged = mergeWindowReports([a.closeWindow(5_000), b.closeWindow(5_000)]);
    expect(merged.lateness?.maxMs).toBe(777.25);
    expect(merged.lateness?.p50Ms).toBeCloseTo(10, 1);
    expect(merged.lateness?.p99Ms).toBeCloseTo(300, 0);
  });

  it("is 0 for a herd on a clock that fires on time", () => {
    const clock = new ManualClock();
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(3), instantTransport(clock), stats, { users: 20, timeoutMs: 2000, retry: retryConfig() });
    herd.start();
    clock.runUntil(60_000);
    const window = stats.closeWindow(60_000);
    expect(window.counts.attempts).toBeGreaterThan(20);
    expect(window.lateness).toEqual({ p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });

  it("is how late a user's timer fired", () => {
    const clock = new LateClock();
    const transport = instantTransport(clock);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(4), transport, stats, { users: 1, timeoutMs: 2000, retry: retryConfig() });
    herd.start();
    const firstDue = clock.manual.nextDueAt()!;
    // The first send runs 250 ms after its due instant.
    clock.lagMs = 250;
    clock.manual.runUntil(firstDue);
    expect(transport.sentAt).toEqual([firstDue + 250]);
    const late = stats.closeWindow(firstDue).lateness!;
    for (const figure of [late.p50Ms, late.p99Ms, late.maxMs]) expect(figure).toBeCloseTo(250, 6);
    // The next wait is planned from the late instant; fired on time, it is not late.
    clock.lagMs = 0;
    const secondDue = clock.manual.nextDueAt()!;
    clock.manual.runUntil(secondDue);
    expect(stats.closeWindow(secondDue).lateness).toEqual({ p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });

  it("holds an attempt that could not be sent, counts it as not sent, and its wait as lateness", () => {
    const clock = new ManualClock();
    const transport = instantTransport(clock, 2);
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(5), transport, stats, {
      users: 1,
      timeoutMs: 2000,
      retry: retryConfig(),
    });
    herd.start();
    const due = clock.nextDueAt()!;
    clock.runUntil(due + 2 * NOT_SENT_WAIT_MS);
    const window = stats.closeWindow(clock.now());
    // Two tries found no descriptor; the third went out 2 waits after its planned instant.
    expect(window.counts).toMatchObject({ attempts: 1, notSent: 2, errors: 0, timedout: 0, ok: 1, retries: 0 });
    expect(window.lateness?.maxMs).toBe(2 * NOT_SENT_WAIT_MS);
    expect(herd.inFlight).toBe(0);
  });

  it("keeps the plan of a held attempt refused by an open breaker: the next attempt, on time, is not late", () => {
    // Two users share one client instance and its breaker. The first user's attempt stays in
    // flight; the second's finds no descriptor and is held; the first then fails, which opens
    // the breaker, so the held attempt is refused when it goes out again and its user plans a
    // retry while still held back. That retry and every later attempt leave on time.
    const clock = new ManualClock();
    const { transport, sinks } = secondNotSentTransport();
    const stats = new WindowStats(0);
    const fleet = { ...NO_FLEET_PROTECTION, instances: 1, breaker: consecutiveBreaker({ failureThreshold: 1, breakMs: 1_000 }) };
    const herd = new Herd(clock, seededRandom(7), transport, stats, { users: 2, timeoutMs: 600_000, retry: retryConfig({ fleet }) });
    herd.start();
    while (sinks.length < 2) clock.runUntil(clock.nextDueAt()!);
    sinks[0]!.done(classifyStatus(500));
    clock.runUntil(clock.now() + 60_000);
    const window = stats.closeWindow(clock.now());
    expect(window.counts.notSent).toBe(1);
    expect(window.counts.rejected).toBeGreaterThan(0);
    expect(window.counts.attempts).toBeGreaterThan(2);
    expect(window.lateness?.maxMs).toBe(0);
  });

  it("ignores a not-sent report for an attempt that has already ended: a later hold counts from its own plan", () => {
    // The first attempt times out; its transport then reports it not sent (late, against the
    // Transport contract). The retry is held once: it is late by one wait, not from the first attempt.
    const clock = new ManualClock();
    const { transport, sinks } = secondNotSentTransport();
    const stats = new WindowStats(0);
    const herd = new Herd(clock, seededRandom(11), transport, stats, { users: 1, timeoutMs: 1_000, retry: retryConfig() });
    herd.start();
    clock.runUntil(clock.nextDueAt()!);
    clock.runUntil(clock.now() + 1_000);
    sinks[0]!.notSent();
    while (sinks.length < 3) clock.runUntil(clock.nextDueAt()!);
    expect(stats.closeWindow(clock.now()).lateness?.maxMs).toBe(NOT_SENT_WAIT_MS);
  });

  it("is how late an open-loop arrival went out after its instant on the Poisson schedule", () => {
    const clock = new LateClock();
    const stats = new WindowStats(0);
    const source = new OpenLoop(clock, seededRandom(6), instantTransport(clock), stats, {
      ratePerSec: 1,
      timeoutMs: 2000,
      retry: retryConfig(),
      maxChains: 10,
    });
    source.start();
    const due = clock.manual.nextDueAt()!;
    clock.lagMs = 75;
    clock.manual.runUntil(due);
    const window = stats.closeWindow(clock.now());
    expect(window.counts.attempts).toBeGreaterThanOrEqual(1);
    expect(window.lateness?.maxMs).toBe(75);
  });
});

describe("the end of a run", () => {
  it("sends nothing at or after the stop instant, even from timers that were due before it and fire late", () => {
    const clock = new LateClock();
    const transport = instantTransport(clock);
    const herd = new Herd(clock, seededRandom(8), transport, new WindowStats(0), { users: 200, timeoutMs: 2000, retry: retryConfig() });
    herd.start(5_000);
    // Every timer due before 4.9 s fires on time; the rest fire 200 ms late, past the stop.
    clock.manual.runUntil(4_900);
    const sentBefore = transport.sentAt.length;
    expect(sentBefore).toBeGreaterThan(0);
    clock.lagMs = 200;
    clock.manual.runUntil(60_000);
    expect(transport.sentAt.length).toBe(sentBefore);
    expect(Math.max(...transport.sentAt)).toBeLessThan(5_000);
  });

  it("sends no open-loop arrival at or after the stop instant", () => {
    const clock = new ManualClock();
    const transport = instantTransport(clock);
    const source = new OpenLoop(clock, seededRandom(9), transport, new WindowStats(0), {
      ratePerSec: 100,
      timeoutMs: 2000,
      retry: retryConfig(),
      maxChains: 1000,
    });
    source.start(1_000);
    clock.runUntil(10_000);
    expect(transport.sentAt.length).toBeGreaterThan(50);
    expect(Math.max(...transport.sentAt)).toBeLessThan(1_000);
  });
});

describe("whether the client fell behind in a window", () => {
  const summary = (p50Ms: number, p99Ms: number, maxMs: number) => ({ p50Ms, p99Ms, maxMs });

  it("defaults to 10 % of the timeout, at least 100 ms", () => {
    expect(defaultBehindThresholdMs(2_000)).toBe(200);
    expect(defaultBehindThresholdMs(400)).toBe(100);
    expect(defaultBehindThresholdMs(30_000)).toBe(3_000);
  });

  it("is behind when the sends' lateness p99 passes the threshold, naming the figure", () => {
    expect(behindReason({ lateness: summary(1, 200, 250), eventLoopDelay: undefined, notSent: 0 }, 200)).toBeUndefined();
    expect(behindReason({ lateness: summary(1, 201, 250), eventLoopDelay: undefined, notSent: 0 }, 200)).toBe(
      "attempts sent late: lateness p99 201 ms (max 250 ms) above 200 ms",
    );
  });

  it("is behind when the event loop is late most of the window, not for one burst", () => {
    expect(behindReason({ lateness: undefined, eventLoopDelay: summary(11, 900, 950), notSent: 0 }, 200)).toBeUndefined();
    expect(behindReason({ lateness: undefined, eventLoopDelay: summary(5_000, 5_000, 5_000), notSent: 0 }, 200)).toBe(
      "event-loop delay p50 5000 ms above 200 ms",
    );
  });

  it("is behind when an attempt could not be sent, and gives every reason at once", () => {
    expect(behindReason({ lateness: summary(0, 0, 0), eventLoopDelay: summary(10, 10, 10), notSent: 3 }, 200)).toBe(
      "3 attempts could not be sent (no file descriptor or local port)",
    );
    expect(behindReason({ lateness: summary(300, 900, 901), eventLoopDelay: summary(400, 500, 500), notSent: 1 }, 200)).toBe(
      "attempts sent late: lateness p99 900 ms (max 901 ms) above 200 ms; event-loop delay p50 400 ms above 200 ms; " +
        "1 attempts could not be sent (no file descriptor or local port)",
    );
  });

  it("says the server's side too when attempts could not be sent: what it held, how it answered", () => {
    const server = { inFlight: 60, answers: summary(950, 990, 999), timedOut: 41 };
    expect(behindReason({ lateness: summary(0, 0, 0), eventLoopDelay: undefined, notSent: 7, server }, 200)).toBe(
      "7 attempts could not be sent (no file descriptor or local port) while 60 sent were waiting on the server " +
        "(its answers p50 950 ms, p99 990 ms, 41 timed out in the window)",
    );
    expect(
      behindReason(
        { lateness: undefined, eventLoopDelay: undefined, notSent: 2, server: { inFlight: 58, answers: undefined, timedOut: 0 } },
        200,
      ),
    ).toBe(
      "2 attempts could not be sent (no file descriptor or local port) while 58 sent were waiting on the server (no answer from it, 0 timed out in the window)",
    );
    expect(behindReason({ lateness: undefined, eventLoopDelay: undefined, notSent: 0, server }, 200)).toBeUndefined();
  });

  it("combines threads' event-loop delays as the worst, figure by figure", () => {
    expect(worstDelay([undefined, summary(1, 50, 60), summary(3, 20, 90)])).toEqual(summary(3, 50, 90));
    expect(worstDelay([undefined])).toBeUndefined();
  });
});

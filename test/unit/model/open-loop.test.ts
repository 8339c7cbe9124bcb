import { describe, expect, it } from "vitest";
import { constantPolicy, consecutiveBreaker, retryBudget } from "../../../src/backoff/index.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import type { Timer } from "../../../src/clock/clock.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { NO_FLEET_PROTECTION } from "../../../src/model/client-instances.ts";
import type { AttemptSink, Transport } from "../../../src/model/herd.ts";
import { OpenLoop, type OpenLoopOptions } from "../../../src/model/open-loop.ts";
import { type AttemptResult, OK_RESULT } from "../../../src/model/outcome.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { retryConfig } from "../../helpers/retry-config.ts";

const FAILED: AttemptResult = { outcome: "error", errorKind: "http-5xx" };

/** A transport on the manual clock that answers every attempt with `result` after `latencyMs` (never, for undefined). */
function scriptedTransport(clock: ManualClock, latencyMs: number, result: AttemptResult | undefined) {
  const sends: { sink: AttemptSink; atMs: number }[] = [];
  const transport: Transport<Timer | undefined> = {
    send(sink) {
      sends.push({ sink, atMs: clock.now() });
      return result === undefined ? undefined : clock.schedule(latencyMs, () => sink.done(result));
    },
    abort(timer) {
      if (timer !== undefined) clock.cancel(timer);
    },
  };
  return { transport, sends };
}

function openLoop(clock: ManualClock, transport: Transport, overrides: Partial<OpenLoopOptions> = {}, seed = 1) {
  const stats = new WindowStats(0);
  const source = new OpenLoop(clock, seededRandom(seed), transport, stats, {
    ratePerSec: 100,
    timeoutMs: 2_000,
    retry: retryConfig(),
    maxChains: 100_000,
    ...overrides,
  });
  return { source, stats };
}

describe("OpenLoop", () => {
  it("sends requests at the Poisson rate over a long virtual time", () => {
    const clock = new ManualClock();
    const { transport, sends } = scriptedTransport(clock, 10, OK_RESULT);
    const { source, stats } = openLoop(clock, transport, { ratePerSec: 100 });
    source.start();
    clock.runUntil(2_000_000);
    // Arrivals in 2 000 s at 100/s are Poisson: mean 200 000, standard deviation 447. Within 5 of them.
    expect(Math.abs(sends.length - 200_000)).toBeLessThan(5 * 447);
    const counts = stats.totals(clock.now()).counts;
    expect(counts.retries).toBe(0);
    expect(counts.ok).toBe(sends.length - source.inFlight);
    // The gaps are exponential: their coefficient of variation is 1 (a fixed-interval source would give 0).
    const gaps = sends.slice(1, 20_001).map((send, index) => send.atMs - sends[index]!.atMs);
    const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length);
    // For 20 000 exponential gaps the sample mean and spread are within ~0.7 % (1 sd); allow 5 %.
    expect(mean).toBeGreaterThan(10 * 0.95);
    expect(mean).toBeLessThan(10 * 1.05);
    expect(sd / mean).toBeGreaterThan(0.95);
    expect(sd / mean).toBeLessThan(1.05);
  });

  it("gives every request its own retry chain, whatever the others do", () => {
    const clock = new ManualClock();
    const { transport, sends } = scriptedTransport(clock, 0, FAILED);
    const { source, stats } = openLoop(clock, transport, {
      ratePerSec: 50,
      retry: retryConfig({ backoff: constantPolicy({ delayMs: 100 }), maxAttempts: 3 }),
    });
    source.start();
    clock.runUntil(60_000);
    source.stop();
    // Each chain sends at its arrival, 100 ms and 200 ms later, then gives up. Chains overlap
    // (at 50/s, about 10 are alive at once) and are reused once they end: split each sink's
    // sends into its chains of three.
    const bySink = new Map<AttemptSink, number[]>();
    for (const { sink, atMs } of sends) bySink.set(sink, [...(bySink.get(sink) ?? []), atMs]);
    let chains = 0;
    for (const times of bySink.values()) {
      for (let index = 0; index + 3 <= times.length; index += 3) {
        const [first, second, third] = times.slice(index, index + 3);
        expect(second! - first!).toBeCloseTo(100, 9);
        expect(third! - first!).toBeCloseTo(200, 9);
        chains++;
      }
    }
    const counts = stats.totals(clock.now()).counts;
    expect(chains).toBe(counts.gaveUp);
    expect(counts.attempts).toBe(sends.length);
    expect(counts.retries).toBe(2 * counts.gaveUp + (sends.length - 3 * counts.gaveUp - source.aliveChains));
    expect(bySink.size).toBeLessThan(40); // chain objects are reused: about as many as are alive at once
    expect(counts.gaveUp).toBeGreaterThan(2_500); // 60 s at 50/s, less the last 200 ms
  });

  it("keeps sending while every request hangs, up to the bound on live chains, and counts the arrivals it drops", () => {
    const clock = new ManualClock();
    const { transport, sends } = scriptedTransport(clock, 0, undefined); // a server that never answers
    const { source, stats } = openLoop(clock, transport, { ratePerSec: 100, timeoutMs: 1_000, maxChains: 500 });
    source.start();
    clock.runUntil(3_000);
    // A closed herd would be stuck at one attempt per user; here arrivals keep coming.
    const firstAttempts = () => stats.totals(clock.now()).counts.attempts - stats.totals(clock.now()).counts.retries;
    expect(Math.abs(firstAttempts() - 300)).toBeLessThan(5 * Math.sqrt(300));
    expect(source.droppedArrivals).toBe(0);
    clock.runUntil(60_000);
    expect(source.aliveChains).toBe(500);
    // Chains live forever under fixed retry: 500 are alive by about 5 s, and the rest of the
    // ~6 000 arrivals are dropped and counted.
    expect(firstAttempts()).toBe(500);
    expect(source.droppedArrivals).toBeGreaterThan(5_000);
    expect(sends.length).toBe(stats.totals(clock.now()).counts.attempts);
  });

  it("stops every wait and attempt, and counts nothing afterwards", () => {
    const clock = new ManualClock();
    const { transport, sends } = scriptedTransport(clock, 500, OK_RESULT);
    const { source, stats } = openLoop(clock, transport, { ratePerSec: 200 });
    source.start();
    clock.runUntil(2_000);
    expect(source.inFlight).toBeGreaterThan(0);
    const counted = stats.totals(clock.now()).counts.ok;
    source.stop();
    expect(source.inFlight).toBe(0);
    const sent = sends.length;
    clock.runUntil(60_000);
    expect(sends.length).toBe(sent);
    expect(stats.totals(clock.now()).counts.ok).toBe(counted);
    expect(clock.nextDueAt()).toBeUndefined();
  });

  it("is reproducible from its seed", () => {
    const run = (seed: number) => {
      const clock = new ManualClock();
      const { transport, sends } = scriptedTransport(clock, 5, OK_RESULT);
      openLoop(clock, transport, {}, seed).source.start();
      clock.runUntil(5_000);
      return sends.map((send) => send.atMs);
    };
    expect(run(9)).toEqual(run(9));
    expect(run(9)).not.toEqual(run(10));
  });

  it("takes the fleet-level protections: a shared breaker refuses the arrivals themselves once open", () => {
    const clock = new ManualClock();
    const { transport, sends } = scriptedTransport(clock, 5, FAILED);
    const breaker = consecutiveBreaker({ failureThreshold: 5, breakMs: 60_000 });
    const retry = retryConfig({
      backoff: constantPolicy({ delayMs: 10 }),
      maxAttempts: 2,
      fleet: { ...NO_FLEET_PROTECTION, instances: 1, breaker },
    });
    const { source, stats } = openLoop(clock, transport, { ratePerSec: 100, retry });
    source.start();
    clock.runUntil(10_000);
    const counts = stats.totals(clock.now()).counts;
    // Five failures open it for a minute: nothing after them reaches the server, arrivals included.
    expect(sends.length).toBeLessThanOrEqual(6);
    expect(counts.attempts).toBe(sends.length);
    expect(counts.rejected).toBeGreaterThan(900);
  });

  it("takes the fleet-level protections: a gRPC budget per chain slot, or one for all", () => {
    const run = (instances: number) => {
      const clock = new ManualClock();
      const { transport } = scriptedTransport(clock, 5, FAILED);
      const retry = retryConfig({
        backoff: constantPolicy({ delayMs: 10 }),
        fleet: { ...NO_FLEET_PROTECTION, instances, budget: { kind: "grpc", budget: retryBudget() } },
      });
      const { source, stats } = openLoop(clock, transport, { ratePerSec: 100, retry, maxChains: 50 });
      source.start();
      clock.runUntil(10_000);
      return stats.totals(clock.now()).counts.retries;
    };
    // No successes: each instance allows 4 retries, ever.
    expect(run(1)).toBe(4);
    expect(run(0)).toBeGreaterThan(4);
  });

  it("spreads arrivals over all -instances K, however few chain slots are alive at once", () => {
    const clock = new ManualClock();
    const { transport } = scriptedTransport(clock, 5, FAILED);
    const retry = retryConfig({
      backoff: constantPolicy({ delayMs: 10 }),
      maxAttempts: 2,
      fleet: { ...NO_FLEET_PROTECTION, instances: 100, budget: { kind: "grpc", budget: retryBudget() } },
    });
    const { source, stats } = openLoop(clock, transport, { ratePerSec: 100, retry });
    source.start();
    clock.runUntil(20_000);
    source.stop();
    // A request lives about 20 ms, so two or three chain slots carry all 2 000 arrivals; each
    // of the 100 instances still sees about 20. With no successes each allows 2 retries ever
    // (first tries and retries cost a token each; retries stop at half the 10 tokens).
    const fleet = source.instances!;
    expect(fleet.count).toBe(100);
    const drained = Array.from({ length: 100 }, (_, instance) => fleet.budgetLevel(instance, clock.now())!);
    expect(drained.filter((tokens) => tokens < retryBudget().maxTokens)).toHaveLength(100);
    expect(stats.totals(clock.now()).counts.retries).toBe(200);
  });

  it("reports each request's end, OK or given up, timed from its arrival, for request-level figures", () => {
    const clock = new ManualClock();
    const { transport } = scriptedTransport(clock, 10, FAILED);
    const ended: [boolean, number][] = [];
    const stats = new WindowStats(0);
    const observer = {
      attemptStarted: (isRetry: boolean) => stats.attemptStarted(isRetry),
      attemptNotSent: (isRetry: boolean) => stats.attemptNotSent(isRetry),
      attemptEnded: (result: AttemptResult, latencyMs: number) => stats.attemptEnded(result, latencyMs),
      attemptRefused: (refusal: "throttled" | "rejected") => stats.attemptRefused(refusal),
      gaveUp: () => stats.gaveUp(),
      requestEnded: (ok: boolean, latencyMs: number) => ended.push([ok, latencyMs]),
    };
    // Three attempts, 10 ms each, 100 ms apart: the request ends given up 10 + 100 + 10 + 100 + 10 ms after it arrived.
    const source = new OpenLoop(clock, seededRandom(1), transport, observer, {
      ratePerSec: 0.001,
      timeoutMs: 2_000,
      retry: retryConfig({ maxAttempts: 3 }),
      maxChains: 10,
    });
    source.start();
    clock.runUntil(5_000_000);
    source.stop();
    expect(ended.length).toBeGreaterThan(0);
    expect(ended.every(([ok, latencyMs]) => !ok && latencyMs === 230)).toBe(true);
    expect(ended.length).toBe(stats.totals(clock.now()).counts.gaveUp);
  });
});

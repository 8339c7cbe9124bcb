import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { budgetAfterFailure, budgetAllowsRetry, initialBudgetState } from "../../../src/backoff/budget.ts";
import type { RetryIntent } from "../../../src/recommend/snippets.ts";
import { meanWaitSequence, policyWaits, snippetOf, winnerIntent } from "../../helpers/snippets.ts";
import { type Answer, startUnaryServer, unaryDefinition, unavailable } from "../../helpers/grpc-server.ts";

/*
 * choose's gRPC service config, given to the real @grpc/grpc-js client, against a real gRPC
 * server on loopback (port 0) that answers UNAVAILABLE on purpose. The server counts the
 * attempts. The waits are read where the client asks for them: the delay grpc-js passes to
 * setTimeout from its retry (RetryingCall.maybeRetryCall) or hedging timer
 * (maybeStartHedgingTimer), with Math.random pinned, so they are exact; the arrival times
 * only confirm the causal order (no attempt arrives before the wait asked for has passed).
 */

const SERVICE = "your.package.YourService";
const DEFINITION = unaryDefinition(SERVICE, "Call");

/** Node may fire a timer up to a millisecond before its delay, by its millisecond clock. */
const TIMER_SLACK_MS = 1;

/** A server on 127.0.0.1:0 for the snippet's service, recording each arrival. */
const startServer = (answer: Answer) => startUnaryServer(DEFINITION, answer);

/** A client of that server with the snippet's service config; `call` makes one call and resolves with its status code. */
function clientWith(port: number, serviceConfig: string) {
  const Client = grpc.makeGenericClientConstructor(DEFINITION, SERVICE);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { "grpc.service_config": serviceConfig });
  const method = client.Call as (request: Buffer, callback: (error: grpc.ServiceError | null) => void) => void;
  const call = () =>
    new Promise<grpc.status>((resolve) => method.call(client, Buffer.alloc(0), (error) => resolve(error?.code ?? grpc.status.OK)));
  return { call, close: () => client.close() };
}

/** The stack of the call, deep enough to reach grpc-js below the spy's own frames. */
function callerStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  try {
    return new Error().stack ?? "";
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The delays grpc-js asks setTimeout for from the named function of its own, recorded as they are
 * asked; with `fireAtOnce`, those timers fire at once (the test reads what was asked, not the waits).
 */
function timersFrom(functionName: string, fireAtOnce = false): number[] {
  const delays: number[] = [];
  const original = globalThis.setTimeout;
  // grpc-js passes a callback and a delay, no arguments for the callback.
  vi.spyOn(globalThis, "setTimeout").mockImplementation(((callback: () => void, delay?: number) => {
    const asked = callerStack().includes(functionName);
    if (asked) delays.push(delay ?? 0);
    return original(callback, asked && fireAtOnce ? 0 : delay);
  }) as typeof setTimeout);
  return delays;
}

const gaps = (times: readonly number[]) => times.slice(1).map((time, index) => time - times[index]!);

/**
 * The config's retryPolicy, run once against a server that always fails, Math.random at u;
 * `fireAtOnce` where only the waits asked for are read (a Google winner's are seconds).
 */
async function retriesAt(intent: RetryIntent, u: number, fireAtOnce = false) {
  const server = await startServer(unavailable);
  const client = clientWith(server.port, snippetOf(intent, "grpc").text);
  vi.spyOn(Math, "random").mockReturnValue(u);
  const asked = timersFrom("maybeRetryCall", fireAtOnce);
  try {
    const code = await client.call();
    return { code, attempts: server.arrivals.length, askedMs: [...asked], arrivalGapsMs: gaps(server.arrivals) };
  } finally {
    vi.restoreAllMocks();
    client.close();
    await server.stop();
  }
}

/** A6 as revised in 2024, and grpc-js: each wait is the current backoff times a uniform 0.8 to 1.2. */
const grpcJitter = (u: number) => 0.8 + 0.4 * u;

describe("the winner's gRPC service config, with the real grpc-js against a failing gRPC server", () => {
  afterEach(() => vi.restoreAllMocks());

  it("makes the winner's attempts, and asks for exactly the simulated waits of gRPC's own policy", async () => {
    // The simulated grpc policy has gRPC's ±20 % jitter: every wait is the same at every draw.
    const intent = winnerIntent({ strategy: "grpc", "min-delay": "10ms", "max-delay": "30ms", "max-attempts": "5" });
    for (const u of [0, 0.5, 1 - 2 ** -20]) {
      const run = await retriesAt(intent, u);
      expect(run.code).toBe(grpc.status.UNAVAILABLE);
      expect(run.attempts).toBe(5);
      const simulated = policyWaits(intent, 4, u);
      run.askedMs.forEach((asked, index) => expect(asked, `u=${u}, wait ${index + 1}`).toBeCloseTo(simulated[index]!, 6));
      expect(run.askedMs).toHaveLength(4);
      run.arrivalGapsMs.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(run.askedMs[index]! - TIMER_SLACK_MS));
    }
  });

  it("waits on average what the winner waits on average, for a fully and an equally jittered winner and a fixed one", async () => {
    // Waits whose means are whole milliseconds, as the service config writes them.
    const winners = [
      winnerIntent({ strategy: "full-jitter", "min-delay": "10ms", "max-delay": "40ms", "max-attempts": "5" }),
      winnerIntent({ strategy: "equal-jitter", "min-delay": "20ms", "max-delay": "40ms", "max-attempts": "5" }),
      winnerIntent({ strategy: "fixed", "simple-backoff-delay": "10ms", "max-attempts": "5" }),
    ];
    for (const intent of winners) {
      const strategy = intent.client.strategy;
      // With the draw in the middle grpc-js waits the backoff itself, its mean.
      const run = await retriesAt(intent, 0.5);
      expect(grpcJitter(0.5)).toBe(1);
      expect(run.attempts).toBe(5);
      // These kinds are linear in their draw: the mean wait is the middle of its two ends.
      const low = policyWaits(intent, 4, 0);
      const high = policyWaits(intent, 4, 1);
      const meanWaits = low.map((wait, index) => (wait + high[index]!) / 2);
      run.askedMs.forEach((asked, index) => expect(asked, `${strategy}: wait ${index + 1}`).toBeCloseTo(meanWaits[index]!, 6));
      expect(run.askedMs).toHaveLength(4);
    }
  });

  it("waits on average what a decorrelated or Google winner waits on average, at its first and last retry, and as close between as its note says", async () => {
    const winners = [
      winnerIntent({ strategy: "decorrelated-jitter", "min-delay": "10ms", "max-delay": "1s", "max-attempts": "5" }),
      winnerIntent({ strategy: "google", "max-attempts": "3" }),
    ];
    for (const intent of winners) {
      const strategy = intent.client.strategy;
      const run = await retriesAt(intent, 0.5, true);
      const retries = run.askedMs.length;
      expect(retries, strategy).toBe(intent.maxAttempts - 1);
      const simulated = meanWaitSequence(intent, retries);
      // The seeded means' own error is under 1 %; grpc-js's waits are whole milliseconds.
      for (const index of [0, retries - 1]) {
        expect(Math.abs(run.askedMs[index]! / simulated[index]! - 1), `${strategy}: retry ${index + 1}`).toBeLessThan(0.02);
      }
      const stated = Number(/within ([\d.]+) % between/.exec(snippetOf(intent, "grpc").notes.join(" "))?.[1] ?? "0") / 100;
      run.askedMs.forEach((asked, index) =>
        expect(Math.abs(asked / simulated[index]! - 1), `${strategy}: retry ${index + 1}`).toBeLessThan(stated + 0.02),
      );
    }
  });

  it("stops retrying when retryThrottling's tokens run out, call after call, as the simulated gRPC budget does", async () => {
    const intent = winnerIntent({
      strategy: "fixed",
      "simple-backoff-delay": "5ms",
      "max-attempts": "5",
      "retry-budget": "true",
      "budget-tokens": "6",
    });
    const budget = intent.budget!;
    const server = await startServer(unavailable);
    const client = clientWith(server.port, snippetOf(intent, "grpc").text);
    try {
      const attemptsPerCall: number[] = [];
      const expected: number[] = [];
      let tokens = initialBudgetState(budget);
      for (let index = 0; index < 3; index++) {
        const before = server.arrivals.length;
        expect(await client.call()).toBe(grpc.status.UNAVAILABLE);
        attemptsPerCall.push(server.arrivals.length - before);
        // The simulated budget: every failure costs a token; a retry only while tokens > maxTokens / 2.
        let attempts = 1;
        tokens = budgetAfterFailure(budget, tokens);
        while (attempts < intent.maxAttempts && budgetAllowsRetry(budget, tokens)) {
          attempts++;
          tokens = budgetAfterFailure(budget, tokens);
        }
        expected.push(attempts);
      }
      expect(expected).toEqual([3, 1, 1]);
      expect(attemptsPerCall).toEqual(expected);
    } finally {
      client.close();
      await server.stop();
    }
  });

  it("sends the hedging policy's copies a hedging delay apart (grpc-js hedges, but does not throttle hedges as A6 says)", async () => {
    const hedging = (extra: Record<string, string>) =>
      winnerIntent({ "hedge-delay": "30ms", "max-attempts": "3", ...extra }, { hedgeDelayMs: 30 });
    for (const intent of [hedging({}), hedging({ budget: "grpc", "budget-tokens": "2" })]) {
      // The server holds every copy until the last has arrived, then fails them all.
      const held: grpc.sendUnaryData<Buffer>[] = [];
      const server = await startServer((_call, callback) => {
        held.push(callback);
        if (held.length === 3) for (const answer of held) unavailable(_call, answer);
      });
      const config = JSON.parse(snippetOf(intent, "grpc").text);
      expect(config.retryThrottling).toEqual(intent.client.budget === "grpc" ? { maxTokens: 2, tokenRatio: 0.1 } : undefined);
      const client = clientWith(server.port, snippetOf(intent, "grpc").text);
      const asked = timersFrom("maybeStartHedgingTimer");
      try {
        for (let call = 0; call < 2; call++) {
          const before = server.arrivals.length;
          held.length = 0;
          const sent = performance.now();
          expect(await client.call()).toBe(grpc.status.UNAVAILABLE);
          // With 2 tokens A6 would send no hedge after the first failures; grpc-js (1.14.7) checks its throttle only before a retry.
          expect(server.arrivals.length - before).toBe(3);
          // Copy k leaves (k - 1) hedging delays after the call began, and arrives after it leaves.
          server.arrivals
            .slice(before)
            .forEach((arrival, copy) => expect(arrival - sent).toBeGreaterThanOrEqual(30 * copy - TIMER_SLACK_MS));
        }
        expect(asked).toEqual([30, 30, 30, 30]);
      } finally {
        vi.restoreAllMocks();
        client.close();
        await server.stop();
      }
    }
  });
});

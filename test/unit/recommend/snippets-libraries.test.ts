import * as smithyRetry from "@smithy/util-retry";
import * as cockatiel from "cockatiel";
import pRetry from "p-retry";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RetryIntent, Snippet } from "../../../src/recommend/snippets.ts";
import { meanWait, observeRetries, policyWaits, runSnippet, snippetOf, winnerIntent } from "../../helpers/snippets.ts";

/*
 * The TypeScript snippets choose prints for cockatiel, p-retry and the AWS SDK (@smithy/util-retry),
 * run with the real libraries (devDependencies) against an operation that always fails. Every
 * Math.random() the library or the snippet draws is pinned to a quantile u, so the waits it asks
 * for are deterministic and comparable with the simulator's own nextDelay at the same quantile.
 */

const MODULES = { cockatiel, "p-retry": { default: pRetry }, "@smithy/util-retry": smithyRetry };

/** Every strategy with 4 attempts; and the capped kinds with enough attempts to reach their cap. */
const WINNERS: RetryIntent[] = [
  ...["fixed", "exponential-backoff", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter", "table", "google", "grpc"].map(
    (strategy) => winnerIntent({ strategy, "max-attempts": "4" }),
  ),
  ...["exponential", "full-jitter", "equal-jitter", "decorrelated-jitter", "grpc"].map((strategy) =>
    winnerIntent({ strategy, "max-attempts": "10", "max-delay": "5s" }),
  ),
  winnerIntent({ strategy: "google", "max-attempts": "9" }),
];

/** Near 1 but below it, as Math.random() is. */
const TOP = 1 - 2 ** -20;

/**
 * The quantiles at which a snippet's waits are the simulated policy's own. Two kinds depend on
 * the previous wait, which no library passes: the reference policy agrees where its noise is
 * zero (u = 0), decorrelated jitter at both ends of its range (u = 0: base each time; u near 1:
 * the per-attempt ceiling base x 3^n).
 */
function exactQuantiles(intent: RetryIntent): number[] {
  if (intent.policy.kind === "reference") return [0];
  if (intent.policy.kind === "decorrelated-jitter") return [0, TOP];
  return [0, 0.3, TOP];
}

/** The libraries round a wait to whole milliseconds (cockatiel floors, p-retry rounds). */
const ROUNDING_MS = 1;

/** Retries the winner makes of a request that always fails: its attempts less one, or fewer when the policy gives up first. */
const expectedRetries = (intent: RetryIntent) => policyWaits(intent, Math.min(intent.maxAttempts, 50) - 1, 0).length;

function expectWaits(observed: readonly number[], expected: readonly number[], label: string): void {
  expect(observed.length, label).toBe(expected.length);
  observed.forEach((wait, index) =>
    expect(Math.abs(wait - expected[index]!), `${label}: wait ${index + 1} ${wait} against ${expected[index]}`).toBeLessThanOrEqual(
      ROUNDING_MS,
    ),
  );
}

const label = (intent: RetryIntent, snippet: Snippet, u: number) =>
  `${snippet.file} for ${JSON.stringify(intent.client)} at u=${u}\n${snippet.text}`;

/** The SDK's retry middleware in brief: attempt, and on a transient error ask the strategy for a retry token (it waits, or refuses). */
async function smithyRetries(strategy: smithyRetry.ConfiguredRetryStrategy, operation: () => Promise<never>): Promise<never> {
  let token = await strategy.acquireInitialRetryToken("snippet-test");
  for (;;) {
    try {
      return await operation();
    } catch {
      token = await strategy.refreshRetryTokenForRetry(token, { errorType: "TRANSIENT" });
    }
  }
}

const RUNNERS = {
  cockatiel: (exports: Record<string, unknown>, operation: () => Promise<never>) =>
    (exports.policy as cockatiel.IPolicy).execute(operation),
  "aws-code": (exports: Record<string, unknown>, operation: () => Promise<never>) =>
    smithyRetries(exports.retryStrategy as smithyRetry.ConfiguredRetryStrategy, operation),
  "p-retry": (exports: Record<string, unknown>, operation: () => Promise<never>) =>
    (exports.withRetries as (operation: () => Promise<never>) => Promise<never>)(operation),
} as const;

async function observe(intent: RetryIntent, id: keyof typeof RUNNERS, u: number) {
  const snippet = snippetOf(intent, id);
  const exports = runSnippet(snippet, MODULES);
  return { snippet, observed: await observeRetries(u, (operation) => RUNNERS[id](exports, operation)) };
}

/** Kinds whose mean wait grows by a fixed factor to a cap, as p-retry's does; for the others p-retry matches the first wait only. */
const GEOMETRIC = new Set(["constant", "exponential", "full-jitter", "equal-jitter", "grpc"]);

/**
 * p-retry's mean wait at each retry from its waits at both ends of Math.random(): their middle
 * where neither is capped (its jitter x 1 to 2 is linear in the draw), maxTimeout where both
 * are; undefined where the cap cuts the range in two.
 */
function pRetryMeans(low: readonly number[], high: readonly number[]): (number | undefined)[] {
  return low.map((lowest, index) => {
    const highest = high[index]!;
    if (highest === lowest) return lowest;
    return Math.abs(highest - 2 * lowest) <= 2 * ROUNDING_MS ? (lowest + highest) / 2 : undefined;
  });
}

describe("the winner's retry code, run with the real libraries", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  for (const id of ["cockatiel", "aws-code"] as const) {
    it(`${id}: asks for the simulated policy's waits, and makes its attempts`, async () => {
      for (const intent of WINNERS) {
        for (const u of exactQuantiles(intent)) {
          const { snippet, observed } = await observe(intent, id, u);
          const expected = policyWaits(intent, expectedRetries(intent), u);
          expect(observed.attempts, label(intent, snippet, u)).toBe(expectedRetries(intent) + 1);
          expectWaits(observed.waitsMs, expected, label(intent, snippet, u));
        }
      }
    });
  }

  it("cockatiel and the AWS SDK keep decorrelated jitter's waits between its base and the simulated ceiling at any draw", async () => {
    const intent = WINNERS.find((winner) => winner.policy.kind === "decorrelated-jitter" && winner.maxAttempts === 10)!;
    for (const id of ["cockatiel", "aws-code"] as const) {
      const { snippet, observed } = await observe(intent, id, 0.6);
      const lowest = policyWaits(intent, 9, 0);
      const highest = policyWaits(intent, 9, TOP);
      observed.waitsMs.forEach((wait, index) => {
        expect(wait, label(intent, snippet, 0.6)).toBeGreaterThanOrEqual(lowest[index]! - ROUNDING_MS);
        expect(wait, label(intent, snippet, 0.6)).toBeLessThanOrEqual(highest[index]! + ROUNDING_MS);
      });
    }
  });

  it("p-retry: makes the winner's attempts, waits exactly as a fixed policy, and on average as the simulated waits", async () => {
    for (const intent of WINNERS) {
      const low = await observe(intent, "p-retry", 0);
      const high = await observe(intent, "p-retry", TOP);
      const text = label(intent, low.snippet, 0);
      expect(low.observed.attempts, text).toBe(expectedRetries(intent) + 1);
      if (intent.policy.kind === "constant") {
        expectWaits(low.observed.waitsMs, policyWaits(intent, expectedRetries(intent), 0), text);
        expectWaits(high.observed.waitsMs, policyWaits(intent, expectedRetries(intent), 0), text);
      }
      const means = pRetryMeans(low.observed.waitsMs, high.observed.waitsMs);
      const checked = GEOMETRIC.has(intent.policy.kind) ? means : means.slice(0, 1);
      checked.forEach((mean, index) => {
        if (mean === undefined) return;
        const simulated = meanWait(intent, index + 1);
        // Four standard errors of 20 000 seeded draws, and p-retry's rounding to whole milliseconds.
        expect(Math.abs(mean - simulated.meanMs), `${text}\nretry ${index + 1}: ${mean} against ${simulated.meanMs}`).toBeLessThanOrEqual(
          4 * simulated.standardErrorMs + ROUNDING_MS,
        );
      });
      // The capped winners reach p-retry's cap: their last waits are compared with it.
      if (intent.maxAttempts === 10 && GEOMETRIC.has(intent.policy.kind)) expect(means.at(-1), text).toBeDefined();
    }
  });
});

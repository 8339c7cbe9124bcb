import { describe, expect, it } from "vitest";
import { googlePolicy, referencePolicy, retryBudget, tablePolicy } from "../../../src/backoff/index.ts";
import { ClientInstances, NO_FLEET_PROTECTION } from "../../../src/model/client-instances.ts";
import { firstWait, initialUserState } from "../../../src/model/client-loop.ts";
import type { AttemptOutcome, Outcome } from "../../../src/model/outcome.ts";
import { afterAttempt } from "../../helpers/retry-config.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { retryConfig as config } from "../../helpers/retry-config.ts";

describe("client loop", () => {
  it("thinks an exponentially distributed time after OK and retries at the fixed interval after failures", () => {
    const retry = config({});
    const random = seededRandom(7);
    const expected = seededRandom(7);
    const state = initialUserState(retry);
    expect(firstWait(retry, state, random)).toBe(expected.exponential(10_000));
    expect(afterAttempt(retry, state, "ok", random)).toEqual({ decision: "think", waitMs: expected.exponential(10_000) });
    expect(afterAttempt(retry, state, "timedout", random)).toEqual({ decision: "retry", waitMs: 100 });
    expect(afterAttempt(retry, state, "error", random)).toEqual({ decision: "retry", waitMs: 100 });
    expect(state.failures).toBe(2);
    afterAttempt(retry, state, "ok", random);
    expect(state.failures).toBe(0);
  });

  it("grows the reference backoff from the think time that preceded the failure", () => {
    const retry = config({ backoff: referencePolicy({ factor: 2.71828, jitterMs: 100 }) });
    const random = seededRandom(11);
    const expected = seededRandom(11);
    const state = initialUserState(retry);
    const think = firstWait(retry, state, random);
    expect(think).toBe(expected.exponential(10_000));
    const first = afterAttempt(retry, state, "timedout", random);
    expect(first.decision).toBe("retry");
    expect(first.waitMs).toBeCloseTo(Math.max(0, Math.min(think * 2.71828, 300_000) + expected.normal(0, 100)), 9);
    const second = afterAttempt(retry, state, "timedout", random);
    expect(second.waitMs).toBeCloseTo(Math.max(0, Math.min(first.waitMs * 2.71828, 300_000) + expected.normal(0, 100)), 9);
  });

  it("gives up after max-attempts and goes back to thinking, with a fresh count", () => {
    const retry = config({ maxAttempts: 3, backoff: tablePolicy({ delaysMs: [0, 10, 20] }) });
    const random = seededRandom(3);
    const state = initialUserState(retry);
    firstWait(retry, state, random);
    expect(afterAttempt(retry, state, "error", random).decision).toBe("retry");
    expect(afterAttempt(retry, state, "error", random).decision).toBe("retry");
    const third = afterAttempt(retry, state, "error", random);
    expect(third.decision).toBe("give-up");
    expect(state.failures).toBe(0);
    expect(afterAttempt(retry, state, "error", random).decision).toBe("retry");
  });

  it("gives up when the Google recipe has used its five retries", () => {
    const retry = config({ backoff: googlePolicy() });
    const random = seededRandom(5);
    const state = initialUserState(retry);
    const decisions = Array.from({ length: 6 }, () => afterAttempt(retry, state, "error", random));
    expect(decisions.map((step) => step.decision)).toEqual(["retry", "retry", "retry", "retry", "retry", "give-up"]);
    expect(decisions.slice(0, 5).map((step) => Math.floor(step.waitMs / 1000))).toEqual([1, 2, 4, 8, 16]);
  });

  it("refuses retries once the retry budget is down to half, and earns it back with successes", () => {
    // 4 tokens: a failure leaves 3 (> 2: retry), a second leaves 2 (not > 2: give up).
    const retry = config({});
    const instances = new ClientInstances(
      { ...NO_FLEET_PROTECTION, budget: { kind: "grpc", budget: retryBudget({ maxTokens: 4, tokenRatio: 0.5 }) } },
      1,
    );
    const gate = { allowRetry: (outcome: AttemptOutcome) => instances.allowRetry(0, outcome, 0) };
    const random = seededRandom(9);
    const state = initialUserState(retry);
    // As the herd does: the attempt's outcome reaches the budget, then the loop decides.
    const step = (outcome: Outcome) => {
      instances.attemptEnded(0, outcome, 0);
      return afterAttempt(retry, state, outcome, random, gate).decision;
    };
    expect(step("error")).toBe("retry");
    expect(step("error")).toBe("give-up");
    expect(instances.budgetLevel(0, 0)).toBe(2);
    step("ok");
    step("ok");
    expect(instances.budgetLevel(0, 0)).toBe(3);
    expect(step("error")).toBe("give-up");
    step("ok");
    step("ok");
    step("ok");
    expect(step("error")).toBe("retry");
  });

  it("asks the gate only about retries the attempt limit and the policy allow", () => {
    const asked: AttemptOutcome[] = [];
    const gate = { allowRetry: (outcome: AttemptOutcome) => (asked.push(outcome), true) };
    const retry = config({ maxAttempts: 2 });
    const random = seededRandom(4);
    const state = initialUserState(retry);
    expect(afterAttempt(retry, state, "timedout", random, gate).decision).toBe("retry");
    expect(afterAttempt(retry, state, "throttled", random, gate).decision).toBe("give-up");
    expect(asked).toEqual(["timedout"]);
    const google = config({ backoff: googlePolicy({ maxRetries: 0 }) });
    expect(afterAttempt(google, initialUserState(google), "rejected", random, gate).decision).toBe("give-up");
    expect(asked).toEqual(["timedout"]);
  });

  it("treats an attempt refused locally as a failure: the backoff grows", () => {
    const retry = config({ backoff: tablePolicy({ delaysMs: [0, 10, 1000] }) });
    const random = seededRandom(2);
    const state = initialUserState(retry);
    expect(afterAttempt(retry, state, "throttled", random).waitMs).toBeLessThan(15);
    expect(afterAttempt(retry, state, "rejected", random).waitMs).toBeGreaterThanOrEqual(500);
    expect(state.failures).toBe(2);
  });
});

import { describe, expect, it } from "vitest";
import {
  attemptAllowed,
  budgetAfterFailure,
  budgetAfterSuccess,
  budgetAllowsRetry,
  initialBucketState,
  initialBudgetState,
  RETRY_BUDGET_DEFAULTS,
  retryBudget,
  takeToken,
  tokenBucket,
  tokensAt,
  type RetryBudget,
  type RetryBudgetState,
  type TokenBucket,
  type TokenBucketState,
} from "../../../src/backoff/budget.ts";

function repeat(
  times: number,
  step: (budget: RetryBudget, state: RetryBudgetState) => RetryBudgetState,
  budget: RetryBudget,
  state: RetryBudgetState,
): RetryBudgetState {
  let current = state;
  for (let i = 0; i < times; i++) current = step(budget, current);
  return current;
}

describe("attemptAllowed (attempts count the original call)", () => {
  it("maxAttempts 3: the original call and two retries", () => {
    expect([1, 2, 3, 4].map((attempt) => attemptAllowed(3, attempt))).toEqual([true, true, true, false]);
  });

  it("Infinity never limits; 1 allows only the original call", () => {
    expect(attemptAllowed(Infinity, 1e12)).toBe(true);
    expect(attemptAllowed(1, 1)).toBe(true);
    expect(attemptAllowed(1, 2)).toBe(false);
  });
});

describe("retry budget (gRPC retry throttling)", () => {
  it("defaults to 10 tokens and a 0.1 ratio, starting full", () => {
    expect(retryBudget()).toEqual(RETRY_BUDGET_DEFAULTS);
    expect(RETRY_BUDGET_DEFAULTS).toEqual({ maxTokens: 10, tokenRatio: 0.1 });
    expect(initialBudgetState(retryBudget())).toEqual({ tokens: 10 });
  });

  it("refuses retries once 5 failures bring 10 tokens down to 5", () => {
    const budget = retryBudget();
    let state = initialBudgetState(budget);
    const trace: [number, boolean][] = [];
    for (let i = 0; i < 5; i++) {
      state = budgetAfterFailure(budget, state);
      trace.push([state.tokens, budgetAllowsRetry(budget, state)]);
    }
    expect(trace).toEqual([
      [9, true],
      [8, true],
      [7, true],
      [6, true],
      [5, false], // 5 is not > 10 / 2
    ]);
  });

  it("climbs back by exactly 0.1 per success and allows retries again", () => {
    const budget = retryBudget();
    let state: RetryBudgetState = { tokens: 5 };
    const climb: number[] = [];
    for (let i = 0; i < 10; i++) {
      state = budgetAfterSuccess(budget, state);
      climb.push(state.tokens);
    }
    expect(climb).toEqual([5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9, 6]);
    expect(budgetAllowsRetry(budget, { tokens: 5.1 })).toBe(true);
  });

  it("crosses the threshold exactly, without floating drift", () => {
    const budget = retryBudget();
    // 4 tokens + 10 successes of 0.1 is exactly 5: still refused; one more allows.
    const atFive = repeat(10, budgetAfterSuccess, budget, { tokens: 4 });
    expect(atFive.tokens).toBe(5);
    expect(budgetAllowsRetry(budget, atFive)).toBe(false);
    expect(budgetAllowsRetry(budget, budgetAfterSuccess(budget, atFive))).toBe(true);
  });

  it("stays within [0, maxTokens]", () => {
    const budget = retryBudget();
    const full = initialBudgetState(budget);
    expect(budgetAfterSuccess(budget, full)).toBe(full); // unchanged: same value back
    expect(repeat(25, budgetAfterFailure, budget, full)).toEqual({ tokens: 0 });
    expect(repeat(3, budgetAfterSuccess, budget, { tokens: 9.95 })).toEqual({ tokens: 10 });
  });

  it("never mutates the state it is given", () => {
    const budget = retryBudget();
    const state = Object.freeze({ tokens: 7 });
    expect(budgetAfterFailure(budget, state)).toEqual({ tokens: 6 });
    expect(budgetAfterSuccess(budget, state)).toEqual({ tokens: 7.1 });
    expect(state.tokens).toBe(7);
  });

  it("other sizes: maxTokens 3, ratio 0.5 refuses at 1.5 and below", () => {
    const budget = retryBudget({ maxTokens: 3, tokenRatio: 0.5 });
    let state = repeat(2, budgetAfterFailure, budget, initialBudgetState(budget));
    expect(state.tokens).toBe(1);
    expect(budgetAllowsRetry(budget, state)).toBe(false);
    state = budgetAfterSuccess(budget, state);
    expect(state.tokens).toBe(1.5);
    expect(budgetAllowsRetry(budget, state)).toBe(false);
    state = budgetAfterSuccess(budget, state);
    expect(budgetAllowsRetry(budget, state)).toBe(true);
  });

  it("keeps 3 decimal places, as gRPC A6 does", () => {
    expect(retryBudget({ tokenRatio: 0.1234, maxTokens: 7.0006 })).toEqual({
      maxTokens: 7.001,
      tokenRatio: 0.123,
    });
  });
});

describe("token bucket (time passed in)", () => {
  const bucket: TokenBucket = tokenBucket({ capacity: 2, refillPerSecond: 1 });

  function takeAt(state: TokenBucketState, nowMs: number): [boolean, TokenBucketState] {
    const take = takeToken(bucket, state, nowMs);
    return [take.allowed, take.state];
  }

  it("allows a burst of `capacity`, then refills at refillPerSecond", () => {
    let state = initialBucketState(bucket, 0);
    let allowed: boolean;
    const trace: [number, boolean, number][] = [];
    for (const nowMs of [0, 0, 0, 500, 1000, 1000, 10_000, 10_000, 10_000]) {
      [allowed, state] = takeAt(state, nowMs);
      trace.push([nowMs, allowed, state.tokens]);
    }
    expect(trace).toEqual([
      [0, true, 1],
      [0, true, 0],
      [0, false, 0],
      [500, false, 0.5],
      [1000, true, 0], // 0.5 + 0.5
      [1000, false, 0],
      [10_000, true, 1], // refilled to the capacity of 2, not 9
      [10_000, true, 0],
      [10_000, false, 0],
    ]);
  });

  it("a clock that steps back refills nothing and keeps the later time", () => {
    const state: TokenBucketState = { tokens: 0.5, updatedAtMs: 10_000 };
    const take = takeToken(bucket, state, 4000);
    expect(take).toEqual({ allowed: false, state: { tokens: 0.5, updatedAtMs: 10_000 } });
    expect(tokensAt(bucket, state, 10_250)).toBe(0.75);
  });

  it("refillPerSecond 0 is a fixed allowance", () => {
    const fixed = tokenBucket({ capacity: 1, refillPerSecond: 0 });
    const first = takeToken(fixed, initialBucketState(fixed, 0), 0);
    expect(first.allowed).toBe(true);
    expect(takeToken(fixed, first.state, 1e12).allowed).toBe(false);
  });

  it("never mutates the state it is given", () => {
    const state = Object.freeze(initialBucketState(bucket, 0));
    takeToken(bucket, state, 5);
    expect(state).toEqual({ tokens: 2, updatedAtMs: 0 });
  });
});

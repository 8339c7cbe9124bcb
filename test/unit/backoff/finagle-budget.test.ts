import { describe, expect, it } from "vitest";
import { FinagleBudgetState, finagleRetryBudget } from "../../../src/backoff/finagle-budget.ts";

describe("Finagle retry budget", () => {
  it("defaults to a 10 s ttl, 10 retries per second in reserve and 20 % of requests", () => {
    expect(finagleRetryBudget()).toEqual({ ttlMs: 10_000, minRetriesPerSec: 10, percentCanRetry: 20 });
    const state = new FinagleBudgetState();
    expect([state.depositUnits, state.withdrawalUnits, state.reserveUnits]).toEqual([1000, 5000, 10 * 10 * 5000]);
  });

  it("allows 20 % of the deposits as retries when there is no reserve", () => {
    const state = new FinagleBudgetState(finagleRetryBudget({ minRetriesPerSec: 0 }));
    for (let request = 0; request < 10; request++) state.deposit(0);
    expect(state.retriesLeft(0)).toBe(2);
    expect([state.tryWithdraw(0), state.tryWithdraw(0), state.tryWithdraw(0)]).toEqual([true, true, false]);
  });

  it("lets deposits expire after the ttl (exact for deposits on a bucket edge)", () => {
    const state = new FinagleBudgetState(finagleRetryBudget({ minRetriesPerSec: 0 }));
    for (let request = 0; request < 5; request++) state.deposit(2_000);
    expect(state.retriesLeft(11_999)).toBe(1);
    expect(state.tryWithdraw(12_000)).toBe(false);
    expect(state.retriesLeft(12_000)).toBe(0);
  });

  it("grants minRetriesPerSec x ttl retries from the reserve, which refills as withdrawals expire", () => {
    const state = new FinagleBudgetState(finagleRetryBudget({ ttlMs: 2_000, minRetriesPerSec: 3, percentCanRetry: 20 }));
    const granted = Array.from({ length: 8 }, () => state.tryWithdraw(0));
    expect(granted).toEqual([true, true, true, true, true, true, false, false]); // 3/s x 2 s
    expect(state.tryWithdraw(1_999)).toBe(false);
    expect(state.tryWithdraw(2_000)).toBe(true); // the withdrawals of t=0 have expired
  });

  it("adds the requests' share to the reserve, per instance", () => {
    const state = new FinagleBudgetState(finagleRetryBudget({ ttlMs: 1_000, minRetriesPerSec: 1, percentCanRetry: 50 }), 2);
    for (let request = 0; request < 4; request++) state.deposit(0, 1);
    expect([state.retriesLeft(0, 0), state.retriesLeft(0, 1)]).toEqual([1, 3]);
  });

  it("rejects a ttl outside 1-60 s and a budget that could never allow a retry", () => {
    expect(() => finagleRetryBudget({ ttlMs: 500 })).toThrow("ttlMs must be >= 1000 (got 500)");
    expect(() => finagleRetryBudget({ ttlMs: 61_000 })).toThrow("ttlMs must be <= 60000 (got 61000)");
    expect(() => finagleRetryBudget({ minRetriesPerSec: 0, percentCanRetry: 0 })).toThrow("must not both be 0");
  });
});

import { describe, expect, it } from "vitest";
import { BROOKER_RETRY_BREAKER, RetryBreakers, retryBreaker, YANDEX_RETRY_BREAKER } from "../../../src/backoff/retry-breaker.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

describe("retry breaker: Yandex's (200 ms window, 10 %)", () => {
  it("allows no retry before any attempt has ended in the window", () => {
    const breakers = new RetryBreakers(YANDEX_RETRY_BREAKER);
    expect(breakers.allowsRetry(0)).toBe(false);
    breakers.attemptEnded(true, 5);
    expect(breakers.allowsRetry(5)).toBe(true);
  });

  it("stops retries once failures reach 10 % of the attempts that ended in the window", () => {
    const breakers = new RetryBreakers(YANDEX_RETRY_BREAKER);
    for (let ok = 0; ok < 9; ok++) breakers.attemptEnded(true, 100);
    breakers.attemptEnded(false, 100);
    expect(breakers.allowsRetry(100)).toBe(false); // 1 / 10 >= 10 %
    breakers.attemptEnded(true, 110);
    expect(breakers.allowsRetry(110)).toBe(true); // 1 / 11 < 10 %
  });

  it("forgets attempts 200 ms after their bucket, so an outage's failures stop counting soon after it", () => {
    const breakers = new RetryBreakers(YANDEX_RETRY_BREAKER);
    for (let failure = 0; failure < 50; failure++) breakers.attemptEnded(false, 1000);
    expect(breakers.allowsRetry(1199)).toBe(false);
    breakers.attemptEnded(true, 1200);
    expect(breakers.allowsRetry(1200)).toBe(true);
  });

  it("keeps the instances apart", () => {
    const breakers = new RetryBreakers(YANDEX_RETRY_BREAKER, 2);
    breakers.attemptEnded(false, 0, 0);
    breakers.attemptEnded(true, 0, 1);
    expect([breakers.allowsRetry(0, 0), breakers.allowsRetry(0, 1)]).toEqual([false, true]);
  });
});

describe("retry breaker: Brooker's (cumulative, 10 %)", () => {
  it("stops retries while failed attempts pass 10 % of the requests started, and never forgets", () => {
    const breakers = new RetryBreakers(BROOKER_RETRY_BREAKER);
    for (let request = 0; request < 20; request++) breakers.requestStarted();
    breakers.attemptEnded(false, 0);
    breakers.attemptEnded(false, 0);
    expect(breakers.allowsRetry(0)).toBe(true); // 2 / 20 is not past 10 %
    breakers.attemptEnded(false, 0);
    expect(breakers.allowsRetry(1e9)).toBe(false); // 3 / 20
    for (let request = 0; request < 10; request++) breakers.requestStarted();
    expect(breakers.allowsRetry(1e9)).toBe(true); // 3 / 30
  });

  it("settles where Brooker's does: at independent failures of 5 % retries go on, at 20 % they stop", () => {
    for (const [failureRate, allowedShare] of [
      [0.05, 1],
      [0.2, 0],
    ] as const) {
      const breakers = new RetryBreakers(BROOKER_RETRY_BREAKER);
      const random = seededRandom(7);
      let allowed = 0;
      let asked = 0;
      for (let request = 0; request < 20_000; request++) {
        breakers.requestStarted();
        for (let attempt = 0; attempt < 4; attempt++) {
          const failed = random.uniform() < failureRate;
          breakers.attemptEnded(!failed, request);
          if (!failed) break;
          asked++;
          if (!breakers.allowsRetry(request)) break;
          allowed++;
        }
      }
      expect(allowed / asked).toBeCloseTo(allowedShare, 1);
    }
  });

  it("checks its ratio", () => {
    expect(() => retryBreaker({ kind: "brooker-retry", failureRatio: 0 })).toThrow(/failureRatio must be > 0/);
    expect(() => retryBreaker({ kind: "yandex-retry", failureRatio: 0.1, windowMs: 0 })).toThrow(/windowMs must be > 0/);
  });
});

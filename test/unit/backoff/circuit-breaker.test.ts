import { describe, expect, it } from "vitest";
import {
  CircuitBreakers,
  consecutiveBreaker,
  BREAKER_PASS,
  BREAKER_PROBE,
  BREAKER_REJECT,
  samplingBreaker,
} from "../../../src/backoff/circuit-breaker.ts";

describe("circuit breaker", () => {
  it("defaults: 5 failures in a row; Polly v8's 0.1, 100 calls, 30 s; a 5 s break", () => {
    expect(consecutiveBreaker()).toEqual({ kind: "consecutive", failureThreshold: 5, breakMs: 5_000 });
    expect(samplingBreaker()).toEqual({ kind: "sampling", failureRatio: 0.1, minimumThroughput: 100, samplingMs: 30_000, breakMs: 5_000 });
  });

  it("consecutive: opens at the N-th failure in a row; a success in between starts the count again", () => {
    const breakers = new CircuitBreakers(consecutiveBreaker({ failureThreshold: 3 }));
    breakers.record(false, false, 0);
    breakers.record(false, false, 1);
    breakers.record(true, false, 2);
    breakers.record(false, false, 3);
    breakers.record(false, false, 4);
    expect(breakers.stateAt(4)).toBe("closed");
    expect(breakers.admit(4)).toBe(BREAKER_PASS);
    breakers.record(false, false, 5);
    expect(breakers.stateAt(5)).toBe("open");
  });

  it("open, half-open, closed: rejects for the break, lets one probe through, closes on its success", () => {
    const breakers = new CircuitBreakers(consecutiveBreaker({ failureThreshold: 1, breakMs: 5_000 }));
    breakers.record(false, false, 1_000);
    expect(breakers.admit(1_000)).toBe(BREAKER_REJECT);
    expect(breakers.admit(5_999)).toBe(BREAKER_REJECT);
    expect(breakers.stateAt(6_000)).toBe("half-open");
    expect(breakers.admit(6_000)).toBe(BREAKER_PROBE);
    expect(breakers.admit(6_001)).toBe(BREAKER_REJECT); // one probe at a time
    breakers.record(true, true, 6_100);
    expect(breakers.stateAt(6_100)).toBe("closed");
    expect(breakers.admit(6_100)).toBe(BREAKER_PASS);
  });

  it("reopens for a full break when the probe fails", () => {
    const breakers = new CircuitBreakers(consecutiveBreaker({ failureThreshold: 2, breakMs: 1_000 }));
    breakers.record(false, false, 0);
    breakers.record(false, false, 0);
    expect(breakers.admit(1_000)).toBe(BREAKER_PROBE);
    breakers.record(false, true, 1_400);
    expect(breakers.stateAt(1_400)).toBe("open");
    expect(breakers.admit(2_399)).toBe(BREAKER_REJECT);
    expect(breakers.admit(2_400)).toBe(BREAKER_PROBE);
    breakers.record(true, true, 2_500);
    // Closed again with a fresh count: one failure does not reopen a threshold of 2.
    breakers.record(false, false, 2_600);
    expect(breakers.stateAt(2_600)).toBe("closed");
  });

  it("ignores outcomes of calls let through before it opened", () => {
    const breakers = new CircuitBreakers(consecutiveBreaker({ failureThreshold: 1, breakMs: 1_000 }));
    breakers.record(false, false, 0);
    breakers.record(true, false, 10); // a call sent while closed, answered late
    expect(breakers.stateAt(10)).toBe("open");
    expect(breakers.admit(1_000)).toBe(BREAKER_PROBE);
    breakers.record(true, false, 1_010); // not the probe: still half-open
    expect(breakers.admit(1_020)).toBe(BREAKER_REJECT);
  });

  it("sampling: opens at the failure ratio only once the window holds the minimum throughput", () => {
    const breakers = new CircuitBreakers(samplingBreaker({ failureRatio: 0.5, minimumThroughput: 4, samplingMs: 10_000 }));
    breakers.record(false, false, 0);
    breakers.record(false, false, 0);
    breakers.record(false, false, 0); // 3 of 3 failed, but fewer than 4 calls
    expect(breakers.stateAt(0)).toBe("closed");
    breakers.record(true, false, 0);
    breakers.record(false, false, 0); // 4 of 5 failed
    expect(breakers.stateAt(0)).toBe("open");
  });

  it("sampling: forgets calls older than the window, and uses Polly's >= on the ratio", () => {
    const breakers = new CircuitBreakers(samplingBreaker({ failureRatio: 0.5, minimumThroughput: 2, samplingMs: 10_000 }), 2);
    breakers.record(false, false, 0, 1);
    breakers.record(true, false, 10_000, 1); // the failure of t=0 has left the window
    breakers.record(true, false, 10_000, 1);
    breakers.record(false, false, 10_000, 1); // 1 of 3
    expect(breakers.stateAt(10_000, 1)).toBe("closed");
    breakers.record(true, false, 0, 0);
    breakers.record(false, false, 0, 0); // 1 of 2 = 0.5
    expect([breakers.stateAt(0, 0), breakers.stateAt(10_000, 1)]).toEqual(["open", "closed"]);
  });

  it("rejects thresholds that cannot work", () => {
    expect(() => consecutiveBreaker({ failureThreshold: 0 })).toThrow("failureThreshold must be >= 1 (got 0)");
    expect(() => samplingBreaker({ failureRatio: 1.5 })).toThrow("failureRatio must be <= 1 (got 1.5)");
  });
});

describe("a probe abandoned by its caller", () => {
  it("opens the breaker again with its break over, so that the next call is the probe instead of the breaker staying half-open", () => {
    const breakers = new CircuitBreakers(consecutiveBreaker({ failureThreshold: 1, breakMs: 1_000 }));
    breakers.record(false, false, 0);
    expect(breakers.admit(1_000)).toBe(BREAKER_PROBE);
    expect(breakers.admit(1_001)).toBe(BREAKER_REJECT);
    breakers.probeAbandoned(1_002);
    expect(breakers.stateAt(1_002)).toBe("half-open");
    expect(breakers.admit(1_003)).toBe(BREAKER_PROBE);
    breakers.record(true, true, 1_010);
    expect(breakers.admit(1_011)).toBe(BREAKER_PASS);
    // Only a half-open breaker has a probe to give back.
    breakers.probeAbandoned(1_012);
    expect(breakers.stateAt(1_012)).toBe("closed");
  });
});

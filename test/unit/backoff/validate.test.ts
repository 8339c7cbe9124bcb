import { describe, expect, it } from "vitest";
import { retryBudget, tokenBucket } from "../../../src/backoff/budget.ts";
import {
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  referencePolicy,
  tablePolicy,
  type BackoffPolicy,
} from "../../../src/backoff/policy.ts";
import { validatePolicy } from "../../../src/backoff/policy.ts";
import { FieldRangeError, validateMaxAttempts } from "../../../src/backoff/validate.ts";

const cases: ReadonlyArray<readonly [string, () => unknown, string]> = [
  ["negative delay", () => constantPolicy({ delayMs: -1 }), "delayMs must be >= 0 (got -1)"],
  ["NaN delay", () => constantPolicy({ delayMs: Number.NaN }), "delayMs must be a number (got NaN)"],
  ["infinite delay", () => constantPolicy({ delayMs: Infinity }), "delayMs must be finite (got Infinity)"],
  ["factor below 1", () => exponentialPolicy({ factor: 0.5 }), "factor must be >= 1 (got 0.5)"],
  ["jitter above 1", () => exponentialPolicy({ jitter: 1.5 }), "jitter must be <= 1 (got 1.5)"],
  ["negative jitter", () => exponentialPolicy({ jitter: -0.1 }), "jitter must be >= 0 (got -0.1)"],
  ["infinite max", () => exponentialPolicy({ maxDelayMs: Infinity }), "maxDelayMs must be finite (got Infinity)"],
  ["min above max", () => exponentialPolicy({ minDelayMs: 500, maxDelayMs: 100 }), "minDelayMs must be <= maxDelayMs (got 500 > 100)"],
  ["negative min", () => referencePolicy({ minDelayMs: -100 }), "minDelayMs must be >= 0 (got -100)"],
  ["negative jitterMs", () => referencePolicy({ jitterMs: -5 }), "jitterMs must be >= 0 (got -5)"],
  ["reference factor NaN", () => referencePolicy({ factor: Number.NaN }), "factor must be a number (got NaN)"],
  ["empty table", () => tablePolicy({ delaysMs: [] }), "delaysMs must not be empty (got [])"],
  ["negative entry", () => tablePolicy({ delaysMs: [0, 10, -3] }), "delaysMs[2] must be >= 0 (got -3)"],
  ["infinite entry", () => tablePolicy({ delaysMs: [0, Infinity] }), "delaysMs[1] must be finite (got Infinity)"],
  ["NaN entry", () => tablePolicy({ delaysMs: [Number.NaN] }), "delaysMs[0] must be a number (got NaN)"],
  ["fractional retries", () => googlePolicy({ maxRetries: 2.5 }), "maxRetries must be an integer (got 2.5)"],
  ["negative retries", () => googlePolicy({ maxRetries: -1 }), "maxRetries must be >= 0 (got -1)"],
  ["too many retries", () => googlePolicy({ maxRetries: 5000 }), "maxRetries must be <= 1000 (got 5000)"],
  ["infinite retries", () => googlePolicy({ maxRetries: Infinity }), "maxRetries must be finite (got Infinity)"],
  ["full: base above cap", () => fullJitterPolicy({ baseMs: 1000, capMs: 10 }), "baseMs must be <= capMs (got 1000 > 10)"],
  ["equal: negative cap", () => equalJitterPolicy({ capMs: -1 }), "capMs must be >= 0 (got -1)"],
  ["decorrelated: zero base", () => decorrelatedJitterPolicy({ baseMs: 0 }), "baseMs must be > 0 (got 0)"],
  ["grpc: multiplier below 1", () => grpcPolicy({ multiplier: 0.9 }), "multiplier must be >= 1 (got 0.9)"],
  ["grpc: jitter above 1", () => grpcPolicy({ jitter: 2 }), "jitter must be <= 1 (got 2)"],
  ["grpc: initial above max", () => grpcPolicy({ initialMs: 200_000 }), "initialMs must be <= maxMs (got 200000 > 120000)"],
  [
    "unknown kind",
    () => validatePolicy({ kind: "fixed", delayMs: 1 } as unknown as BackoffPolicy),
    'kind must be a known policy kind (got "fixed")',
  ],
  [
    "string where a number belongs",
    () => validatePolicy({ kind: "constant", delayMs: "100" } as unknown as BackoffPolicy),
    'delayMs must be a number (got "100")',
  ],
  [
    "table that is not an array",
    () => validatePolicy({ kind: "table", delaysMs: 5 } as unknown as BackoffPolicy),
    "delaysMs must be an array of numbers (got 5)",
  ],
  ["maxAttempts 0", () => validateMaxAttempts(0), "maxAttempts must be >= 1 (got 0)"],
  ["maxAttempts 1.5", () => validateMaxAttempts(1.5), "maxAttempts must be an integer (got 1.5)"],
  ["maxAttempts NaN", () => validateMaxAttempts(Number.NaN), "maxAttempts must be a number (got NaN)"],
  ["maxAttempts -Infinity", () => validateMaxAttempts(-Infinity), "maxAttempts must be finite (got -Infinity)"],
  ["maxTokens 0", () => retryBudget({ maxTokens: 0 }), "maxTokens must be >= 0.001 (got 0)"],
  ["maxTokens 1001", () => retryBudget({ maxTokens: 1001 }), "maxTokens must be <= 1000 (got 1001)"],
  ["tokenRatio 0", () => retryBudget({ tokenRatio: 0 }), "tokenRatio must be >= 0.001 (got 0)"],
  ["tokenRatio tiny", () => retryBudget({ tokenRatio: 0.0001 }), "tokenRatio must be >= 0.001 (got 0.0001)"],
  ["bucket below one token", () => tokenBucket({ capacity: 0.5, refillPerSecond: 1 }), "capacity must be >= 1 (got 0.5)"],
  ["negative refill", () => tokenBucket({ capacity: 5, refillPerSecond: -1 }), "refillPerSecond must be >= 0 (got -1)"],
];

describe("validation", () => {
  it.each(cases)("%s", (_name, build, message) => {
    expect(build).toThrow(RangeError);
    expect(build).toThrow(message);
  });

  it("names the field as a property too, so that a program can say it in its own words", () => {
    const caught = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        return error as FieldRangeError;
      }
      throw new Error("expected a FieldRangeError");
    };
    const ordered = caught(() => exponentialPolicy({ minDelayMs: 500, maxDelayMs: 100 }));
    expect(ordered).toBeInstanceOf(FieldRangeError);
    expect(ordered.name).toBe("RangeError");
    expect(ordered).toMatchObject({ field: "minDelayMs", otherField: "maxDelayMs", index: undefined });
    expect(ordered.describe((field) => field.toUpperCase())).toBe("MINDELAYMS must be <= MAXDELAYMS (got 500 > 100)");
    expect(caught(() => tablePolicy({ delaysMs: [0, 10, -3] }))).toMatchObject({ field: "delaysMs", index: 2 });
  });

  it("accepts the edges of every range", () => {
    expect(() => constantPolicy({ delayMs: 0 })).not.toThrow();
    expect(() => exponentialPolicy({ factor: 1, jitter: 0, minDelayMs: 0, maxDelayMs: 0 })).not.toThrow();
    expect(() => exponentialPolicy({ jitter: 1, minDelayMs: 300_000 })).not.toThrow();
    expect(() => tablePolicy({ delaysMs: [0] })).not.toThrow();
    expect(() => googlePolicy({ maxRetries: 0 })).not.toThrow();
    expect(() => googlePolicy({ maxRetries: 1000 })).not.toThrow();
    expect(() => decorrelatedJitterPolicy({ baseMs: 0.5, capMs: 0.5 })).not.toThrow();
    expect(() => grpcPolicy({ jitter: 1, multiplier: 1 })).not.toThrow();
    expect(validateMaxAttempts(Infinity)).toBe(Infinity);
    expect(validateMaxAttempts(1)).toBe(1);
    expect(() => retryBudget({ maxTokens: 1000, tokenRatio: 0.001 })).not.toThrow();
    expect(() => tokenBucket({ capacity: 1, refillPerSecond: 0 })).not.toThrow();
  });

  it("validatePolicy returns a valid policy unchanged", () => {
    const literal: BackoffPolicy = { kind: "constant", delayMs: 5 };
    expect(validatePolicy(literal)).toBe(literal);
  });
});

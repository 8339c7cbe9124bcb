import { describe, expect, it } from "vitest";
import {
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  isPolicyKind,
  POLICY_DEFAULTS,
  POLICY_KINDS,
  referencePolicy,
  tablePolicy,
} from "../../../src/backoff/policy.ts";
import * as policyModule from "../../../src/backoff/policy.ts";
import { type BackoffPolicy, policyDefinition } from "../../../src/backoff/policies.ts";

describe("policy factories", () => {
  it("fill every default", () => {
    expect(constantPolicy()).toEqual({ kind: "constant", delayMs: 100 });
    expect(exponentialPolicy()).toEqual({
      kind: "exponential",
      minDelayMs: 100,
      maxDelayMs: 300_000,
      factor: 2.71828,
      jitter: 0.1,
    });
    expect(referencePolicy()).toEqual({
      kind: "reference",
      minDelayMs: 100,
      maxDelayMs: 300_000,
      factor: 2.71828,
      jitterMs: 100,
    });
    expect(tablePolicy()).toEqual({
      kind: "table",
      delaysMs: [0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000],
    });
    expect(googlePolicy()).toEqual({ kind: "google", maxRetries: 5 });
    expect(fullJitterPolicy()).toEqual({ kind: "full-jitter", baseMs: 100, capMs: 300_000 });
    expect(equalJitterPolicy()).toEqual({ kind: "equal-jitter", baseMs: 100, capMs: 300_000 });
    expect(decorrelatedJitterPolicy()).toEqual({
      kind: "decorrelated-jitter",
      baseMs: 100,
      capMs: 300_000,
    });
    expect(grpcPolicy()).toEqual({
      kind: "grpc",
      initialMs: 1000,
      multiplier: 1.6,
      maxMs: 120_000,
      jitter: 0.2,
    });
  });

  it("agree with POLICY_DEFAULTS, which lists every kind: each kind's factory by its definition's library name", () => {
    for (const kind of POLICY_KINDS) {
      const name = policyDefinition(kind).libraryName;
      const factory = (policyModule as Record<string, unknown>)[name];
      expect(typeof factory, name).toBe("function");
      const policy = (factory as () => BackoffPolicy)();
      expect(policy.kind).toBe(kind);
      expect(policy).toEqual(POLICY_DEFAULTS[kind]);
    }
  });

  it("override given fields and treat undefined as the default", () => {
    expect(exponentialPolicy({ factor: 2, maxDelayMs: undefined })).toEqual({
      ...POLICY_DEFAULTS.exponential,
      factor: 2,
    });
    expect(grpcPolicy({ initialMs: 20_000 }).initialMs).toBe(20_000);
  });

  it("return frozen data; the table is a copy", () => {
    const table = [0, 50, 200];
    const policy = tablePolicy({ delaysMs: table });
    table[1] = 999;
    expect(policy.delaysMs).toEqual([0, 50, 200]);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.delaysMs)).toBe(true);
    expect(Object.isFrozen(constantPolicy())).toBe(true);
    expect(Object.isFrozen(POLICY_DEFAULTS.table.delaysMs)).toBe(true);
  });

  it("isPolicyKind recognises exactly the kinds", () => {
    expect(POLICY_KINDS.every(isPolicyKind)).toBe(true);
    expect(isPolicyKind("fixed")).toBe(false);
    expect(isPolicyKind("toString")).toBe(false);
  });
});

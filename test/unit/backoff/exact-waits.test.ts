import { describe, expect, it } from "vitest";
import { nextDelay } from "../../../src/backoff/delay.ts";
import { type BackoffPolicy, exactWaitsOf, POLICY_DEFINITIONS } from "../../../src/backoff/policies.ts";
import type { ExactWaits } from "../../../src/backoff/policies/exact-waits.ts";
import { POLICY_DEFAULTS } from "../../../src/backoff/policy.ts";
import type { Random } from "../../../src/backoff/random.ts";
import * as library from "../../../src/backoff/index.ts";

/*
 * A policy's exact waits (its definition's exactWaits) are what check writes into other systems'
 * settings: each form must wait what the policy waits, draw for draw.
 */

/** Every draw at the same point `u` of its range. */
const at = (u: number): Random => ({
  uniform: () => u,
  uniformInt: (maxExclusive) => Math.floor(u * maxExclusive),
  exponential: (mean) => -mean * Math.log(1 - u),
  normal: (mean) => mean,
});

/** The wait before retry `attempt` as the form writes it, every draw at `u`, after a previous wait. */
function formWait(form: ExactWaits, attempt: number, previousMs: number | undefined, u: number): number {
  switch (form.form) {
    case "fixed":
      return form.delayMs;
    case "geometric":
      return Math.min(form.initialMs * form.multiplier ** (attempt - 1), form.maxMs) * (1 + form.spread * (2 * u - 1));
    case "aws": {
      const ceiling = Math.min(form.capMs, form.baseMs * 2 ** (attempt - 1));
      if (form.jitter === "full") return u * ceiling;
      if (form.jitter === "equal") return ceiling / 2 + (u * ceiling) / 2;
      const high = Math.max(form.baseMs, 3 * Math.min(previousMs ?? form.baseMs, form.capMs));
      return Math.min(form.capMs, form.baseMs + u * (high - form.baseMs));
    }
    case "listed": {
      const middle = form.delaysMs[Math.min(attempt, form.delaysMs.length - 1)]!;
      return middle === 0 ? 0 : Math.floor(middle / 2) + Math.floor(u * middle);
    }
  }
}

/** Policies of every kind, with parameters that reach each form. */
const POLICIES: readonly BackoffPolicy[] = [
  ...POLICY_DEFINITIONS.map((definition) => definition.defaults as BackoffPolicy),
  library.constantPolicy({ delayMs: 250 }),
  library.exponentialPolicy({ jitter: 0 }),
  library.exponentialPolicy({ jitter: 0, factor: 1 }),
  library.exponentialPolicy({ jitter: 0, minDelayMs: 500, maxDelayMs: 1000 }),
  library.grpcPolicy({ jitter: 0, multiplier: 2 }),
  library.grpcPolicy({ jitter: 0, multiplier: 1 }),
  library.grpcPolicy({ jitter: 0, initialMs: 5000, maxMs: 5000 }),
  library.grpcPolicy({ jitter: 0.25, multiplier: 1 }),
  library.fullJitterPolicy({ baseMs: 50, capMs: 2000 }),
  library.equalJitterPolicy({ baseMs: 50, capMs: 2000 }),
  library.decorrelatedJitterPolicy({ baseMs: 50, capMs: 2000 }),
  library.tablePolicy({ delaysMs: [0, 100, 200, 300] }),
];

describe("a policy's exact waits", () => {
  it("wait what the policy waits, draw for draw, before every retry of every kind that has them", () => {
    let checked = 0;
    for (const policy of POLICIES) {
      const form = exactWaitsOf(policy);
      if (form === undefined) continue;
      for (const u of [0, 0.37, 0.999]) {
        let previous: number | undefined;
        for (let attempt = 1; attempt <= 10; attempt++) {
          const wait = nextDelay(policy, attempt, previous, at(u))!;
          expect(formWait(form, attempt, previous, u), `${JSON.stringify(policy)} retry ${attempt}, u ${u}`).toBeCloseTo(wait, 9);
          previous = wait;
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("are the simplest form that says them: one wait where they never grow, none for a jitter no other system speaks", () => {
    expect(exactWaitsOf(POLICY_DEFAULTS.constant)).toEqual({ form: "fixed", delayMs: 100 });
    expect(exactWaitsOf(library.grpcPolicy({ jitter: 0, multiplier: 1, initialMs: 300 }))).toEqual({ form: "fixed", delayMs: 300 });
    expect(exactWaitsOf(library.grpcPolicy({ jitter: 0, initialMs: 5000, maxMs: 5000 }))).toEqual({ form: "fixed", delayMs: 5000 });
    expect(exactWaitsOf(POLICY_DEFAULTS.grpc)).toEqual({
      form: "geometric",
      initialMs: 1000,
      multiplier: 1.6,
      maxMs: 120_000,
      spread: 0.2,
    });
    // The exponential policy's first retry waits min × factor: gRPC's form from there.
    expect(exactWaitsOf(library.exponentialPolicy({ jitter: 0, minDelayMs: 100, factor: 2, maxDelayMs: 10_000 }))).toEqual({
      form: "geometric",
      initialMs: 200,
      multiplier: 2,
      maxMs: 10_000,
      spread: 0,
    });
    expect(exactWaitsOf(library.exponentialPolicy({ jitter: 0, factor: 1, minDelayMs: 100 }))).toEqual({ form: "fixed", delayMs: 100 });
    expect(exactWaitsOf(library.exponentialPolicy({ jitter: 0.1 }))).toBeUndefined();
    expect(exactWaitsOf(POLICY_DEFAULTS["equal-jitter"])).toEqual({ form: "aws", jitter: "equal", baseMs: 100, capMs: 300_000 });
    expect(exactWaitsOf(POLICY_DEFAULTS.table)).toEqual({ form: "listed", delaysMs: POLICY_DEFAULTS.table.delaysMs });
    expect(exactWaitsOf(POLICY_DEFAULTS.google)).toBeUndefined();
    expect(exactWaitsOf(POLICY_DEFAULTS.reference)).toBeUndefined();
  });
});

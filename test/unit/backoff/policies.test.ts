import { describe, expect, it } from "vitest";
import { nextDelay } from "../../../src/backoff/delay.ts";
import { type BackoffPolicy, POLICY_DEFINITIONS, policyDefinition } from "../../../src/backoff/policies.ts";
import type { PolicyDefinition } from "../../../src/backoff/policies/definition.ts";
import { POLICY_DEFAULTS, POLICY_KINDS, validatePolicy } from "../../../src/backoff/policy.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import * as library from "../../../src/backoff/index.ts";

/*
 * Every registered policy kind, whatever it is, through what every kind provides: a new kind's
 * line in src/backoff/policies.ts brings it here with no change to this file. Its own waits,
 * checked by hand, are in delay.test.ts; its bad fields in validate.test.ts.
 */

const SEED = 7;
/** Past every default's cap and give-up. */
const FAILURES = 40;

describe.each(POLICY_DEFINITIONS.map((definition) => [definition.defaults.kind, definition as PolicyDefinition<BackoffPolicy>] as const))(
  "the %s policy",
  (kind, definition) => {
    it("is listed by its kind, with its defaults as POLICY_DEFAULTS has them", () => {
      expect(policyDefinition(kind)).toBe(definition);
      expect(POLICY_KINDS).toContain(kind);
      expect(POLICY_DEFAULTS[kind]).toBe(definition.defaults);
      expect(Object.isFrozen(definition)).toBe(true);
      expect(Object.isFrozen(definition.defaults)).toBe(true);
    });

    it("is the library's export by the name code written with the library calls it", () => {
      expect((library as Record<string, unknown>)[definition.libraryName]).toBe(definition.create);
    });

    it("builds its defaults, frozen, and validates them", () => {
      const built = definition.create();
      expect(built).toEqual(definition.defaults);
      expect(Object.keys(built)).toEqual(Object.keys(definition.defaults));
      expect(Object.isFrozen(built)).toBe(true);
      expect(validatePolicy(built)).toBe(built);
    });

    it("waits a finite time, not negative, after each failure, or gives up for good", () => {
      const random = seededRandom(SEED);
      let gaveUp = false;
      let previous: number | undefined;
      for (let attempt = 1; attempt <= FAILURES; attempt++) {
        const wait = nextDelay(definition.defaults, attempt, previous, random);
        if (gaveUp) expect(wait).toBeUndefined();
        if (wait === undefined) gaveUp = true;
        else expect(Number.isFinite(wait) && wait >= 0, `attempt ${attempt}: ${wait}`).toBe(true);
        previous = wait;
      }
    });

    it("waits what it says before the first attempt, and what it says on every retry where its waits never vary", () => {
      const random = seededRandom(SEED);
      expect(nextDelay(definition.defaults, 0, undefined, random)).toBe(
        definition.waitBeforeFirstAttempt?.(definition.defaults, seededRandom(SEED)) ?? 0,
      );
      const fixed = definition.fixedWaitMs?.(definition.defaults);
      if (fixed === undefined) return;
      for (let attempt = 1; attempt <= FAILURES; attempt++)
        expect(nextDelay(definition.defaults, attempt, attempt * 1000, random)).toBe(fixed);
    });

    it("grows its first retry from the think time before it, if it says it does", () => {
      if (!definition.firstWaitFollowsThinkTime) return;
      const afterThinking = (thinkMs: number) => nextDelay(definition.defaults, 1, thinkMs, seededRandom(SEED));
      expect(afterThinking(20_000)).toBeGreaterThan(afterThinking(10_000)!);
    });
  },
);

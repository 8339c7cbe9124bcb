import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/backoff/random.ts";
import { bisectCriticalOutage } from "../../../src/runner/critical-outage.ts";

/** The search as it was written before it could run ahead: one evaluation at a time. */
function sequential(recovers: (ms: number) => boolean, resolution: number, upper: number) {
  if (!recovers(resolution)) return { kind: "none" };
  if (recovers(upper)) return { kind: "at-least" };
  let low = resolution;
  let high = upper;
  while (high - low > resolution) {
    const middle = Math.round((low + high) / 2);
    if (recovers(middle)) low = middle;
    else high = middle;
  }
  return { kind: "between", lowMs: low, highMs: high };
}

/** A predicate that is not monotonic (a seeded simulation near its threshold need not be). */
function noisyThreshold(threshold: number, seed: number) {
  const random = seededRandom(seed);
  const flips = new Map<number, boolean>();
  return (ms: number) => {
    if (!flips.has(ms)) flips.set(ms, Math.abs(ms - threshold) < 20_000 && random.uniform() < 0.3);
    return ms <= threshold !== flips.get(ms);
  };
}

describe("bisectCriticalOutage", () => {
  it.each([1, 2, 3, 4, 7, 16])("finds what the sequential bisection finds with %i evaluations at a time", async (width) => {
    for (const [threshold, seed] of [
      [100, 1],
      [4_058, 2],
      [35_393, 3],
      [123_456, 4],
      [700_000, 5],
      [599_999, 6],
    ] as const) {
      const recovers = noisyThreshold(threshold, seed);
      const evaluated: number[] = [];
      const answer = await bisectCriticalOutage(
        async (ms) => {
          evaluated.push(ms);
          return recovers(ms);
        },
        () => width,
        250,
        600_000,
      );
      expect(answer).toEqual(sequential(recovers, 250, 600_000));
      expect(new Set(evaluated).size).toBe(evaluated.length); // never the same point twice
    }
  });

  it("needs fewer rounds with room to evaluate ahead", async () => {
    const rounds = async (width: number) => {
      let inFlight = 0;
      let round = 0;
      let started: Promise<void> | undefined;
      await bisectCriticalOutage(
        (ms) => {
          inFlight++;
          // Evaluations started together finish together: one round.
          started ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
            round++;
            started = undefined;
          });
          return started.then(() => {
            inFlight--;
            return ms <= 77_777;
          });
        },
        () => width,
        250,
        600_000,
      );
      expect(inFlight).toBe(0);
      return round;
    };
    const one = await rounds(1);
    const three = await rounds(3);
    expect(one).toBeGreaterThanOrEqual(12);
    expect(three).toBeLessThanOrEqual(Math.ceil(one / 2) + 1);
  });
});

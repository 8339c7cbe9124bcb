import { describe, expect, it } from "vitest";
import { nextDelay } from "../../../src/backoff/delay.ts";
import {
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  POLICY_DEFAULTS,
  referencePolicy,
  tablePolicy,
  type BackoffPolicy,
} from "../../../src/backoff/policy.ts";
import { seededRandom, type Random } from "../../../src/backoff/random.ts";

const SEED = 20_240_621;
const DRAWS = 10_000;

/** A Random that replays scripted values, for waits checked by hand. */
function scriptedRandom(uniforms: readonly number[], normals: readonly number[] = [0]): Random {
  let u = 0;
  let z = 0;
  const uniform = (): number => uniforms[u++ % uniforms.length] ?? 0;
  return {
    uniform,
    uniformInt: (maxExclusive) => Math.floor(uniform() * maxExclusive),
    exponential: (mean) => -mean * Math.log(1 - uniform()),
    normal: (mean, sd) => mean + sd * (normals[z++ % normals.length] ?? 0),
  };
}

function draw(policy: BackoffPolicy, attempt: number, previousDelayMs?: number): number[] {
  const random = seededRandom(SEED);
  const waits: number[] = [];
  for (let i = 0; i < DRAWS; i++) {
    const wait = nextDelay(policy, attempt, previousDelayMs, random);
    if (wait === undefined) throw new Error(`unexpected give-up at attempt ${attempt}`);
    waits.push(wait);
  }
  return waits;
}

function summary(values: readonly number[]): { mean: number; sd: number; min: number; max: number } {
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - mean) ** 2;
  return { mean, sd: Math.sqrt(squares / (values.length - 1)), min, max };
}

describe("nextDelay: values checked by hand (scripted random)", () => {
  it("constant waits delayMs every time", () => {
    const random = scriptedRandom([0.5]);
    expect(nextDelay(constantPolicy(), 1, undefined, random)).toBe(100);
    expect(nextDelay(constantPolicy({ delayMs: 250 }), 1000, 5, random)).toBe(250);
  });

  it("exponential: 100 * 2.71828^n capped at 5 min, plus proportional normal jitter", () => {
    const policy = exponentialPolicy();
    const noJitter = scriptedRandom([0.5], [0]);
    expect(nextDelay(policy, 1, undefined, noJitter)).toBeCloseTo(271.828, 6);
    expect(nextDelay(policy, 2, undefined, noJitter)).toBeCloseTo(738.904_615_84, 6);
    expect(nextDelay(policy, 3, undefined, noJitter)).toBeCloseTo(2008.549_639_1, 6);
    // 100 * 2.71828^8 = 298 094.2 is the last step below the cap; the 9th step (810 302) is above.
    expect(nextDelay(policy, 8, undefined, noJitter)).toBeCloseTo(298_094.194_6, 3);
    expect(nextDelay(policy, 9, undefined, noJitter)).toBe(300_000);
    // One standard deviation up is +10 %; twenty down would be negative and clamps to 0.
    expect(nextDelay(policy, 1, undefined, scriptedRandom([0.5], [1]))).toBeCloseTo(299.010_8, 3);
    expect(nextDelay(policy, 1, undefined, scriptedRandom([0.5], [-20]))).toBe(0);
  });

  it("reference: previous * 2.71828 capped at 5 min, plus absolute N(0, 100 ms)", () => {
    const policy = referencePolicy();
    expect(nextDelay(policy, 1, 10_000, scriptedRandom([0.5], [0]))).toBeCloseTo(27_182.8, 3);
    expect(nextDelay(policy, 1, 10_000, scriptedRandom([0.5], [1]))).toBeCloseTo(27_282.8, 3);
    // No previous wait: minDelayMs 100 is the base.
    expect(nextDelay(policy, 1, undefined, scriptedRandom([0.5], [0]))).toBeCloseTo(271.828, 3);
    expect(nextDelay(policy, 7, 200_000, scriptedRandom([0.5], [-1]))).toBe(299_900);
    expect(nextDelay(policy, 2, 0, scriptedRandom([0.5], [-1]))).toBe(0);
  });

  it("table: floor(m/2) + uniformInt(m), saturating at the last entry", () => {
    const policy = tablePolicy();
    const middle = scriptedRandom([0.5]);
    expect(nextDelay(policy, 1, undefined, middle)).toBe(10); // 5 + floor(0.5 * 10)
    expect(nextDelay(policy, 3, undefined, middle)).toBe(100); // 50 + 50
    expect(nextDelay(policy, 9, undefined, middle)).toBe(5000);
    expect(nextDelay(policy, 10, undefined, middle)).toBe(5000);
    expect(nextDelay(policy, 1_000_000, undefined, middle)).toBe(5000);
    expect(nextDelay(policy, 5, undefined, scriptedRandom([0]))).toBe(250); // low end: m/2
    expect(nextDelay(policy, 7, undefined, scriptedRandom([0.999_999]))).toBe(4499); // 1500 + 2999
    // Odd entries round like Go's integer division: 7/2 = 3, so [3, 9].
    const odd = tablePolicy({ delaysMs: [0, 7] });
    expect(nextDelay(odd, 1, undefined, scriptedRandom([0]))).toBe(3);
    expect(nextDelay(odd, 1, undefined, scriptedRandom([0.999_999]))).toBe(9);
  });

  it("table: attempt 0 is entry 0, the wait before the first attempt", () => {
    expect(nextDelay(tablePolicy(), 0, undefined, scriptedRandom([0.5]))).toBe(0);
    expect(nextDelay(tablePolicy({ delaysMs: [40, 80] }), 0, undefined, scriptedRandom([0.5]))).toBe(40);
  });

  it("google: 1, 2, 4, 8, 16 s plus 0..1000 ms, then gives up", () => {
    const policy = googlePolicy();
    const low = scriptedRandom([0]);
    expect([1, 2, 3, 4, 5, 6].map((n) => nextDelay(policy, n, undefined, low))).toEqual([1000, 2000, 4000, 8000, 16_000, undefined]);
    // floor(0.999999 * 1001) = 1000: the top of the inclusive range is reachable.
    const high = scriptedRandom([0.999_999]);
    expect([1, 2, 3, 4, 5].map((n) => nextDelay(policy, n, undefined, high))).toEqual([2000, 3000, 5000, 9000, 17_000]);
    expect(nextDelay(googlePolicy({ maxRetries: 0 }), 1, undefined, low)).toBeUndefined();
    expect(nextDelay(googlePolicy({ maxRetries: 7 }), 7, undefined, low)).toBe(64_000);
  });

  it("full jitter: uniform(0, min(cap, base * 2^(n-1)))", () => {
    const policy = fullJitterPolicy();
    const middle = scriptedRandom([0.5]);
    expect(nextDelay(policy, 1, undefined, middle)).toBe(50);
    expect(nextDelay(policy, 4, undefined, middle)).toBe(400);
    expect(nextDelay(policy, 30, undefined, middle)).toBe(150_000);
  });

  it("equal jitter: temp/2 + uniform(0, temp/2)", () => {
    const policy = equalJitterPolicy();
    const middle = scriptedRandom([0.5]);
    expect(nextDelay(policy, 1, undefined, middle)).toBe(75);
    expect(nextDelay(policy, 4, undefined, middle)).toBe(600);
    expect(nextDelay(policy, 4, undefined, scriptedRandom([0]))).toBe(400);
  });

  it("decorrelated jitter: min(cap, uniform(base, 3 * previous))", () => {
    const policy = decorrelatedJitterPolicy();
    const middle = scriptedRandom([0.5]);
    expect(nextDelay(policy, 1, undefined, middle)).toBe(200); // 100 + 0.5 * (300 - 100)
    expect(nextDelay(policy, 2, 1000, middle)).toBe(1550); // 100 + 0.5 * 2900
    expect(nextDelay(policy, 3, 200_000, middle)).toBe(300_000); // 300 050 capped
    // A foreign previous wait below base/3 would invert the range: the wait is base.
    expect(nextDelay(policy, 2, 10, middle)).toBe(100);
  });

  it("grpc: min(1000 * 1.6^(n-1), 120000) * (1 ± 0.2)", () => {
    const policy = grpcPolicy();
    const middle = scriptedRandom([0.5]);
    expect(nextDelay(policy, 1, undefined, middle)).toBe(1000);
    expect(nextDelay(policy, 2, undefined, middle)).toBeCloseTo(1600, 9);
    expect(nextDelay(policy, 3, undefined, middle)).toBeCloseTo(2560, 9);
    expect(nextDelay(policy, 20, undefined, middle)).toBe(120_000);
    expect(nextDelay(policy, 1, undefined, scriptedRandom([0]))).toBeCloseTo(800, 9);
    expect(nextDelay(policy, 2, undefined, scriptedRandom([0.75]))).toBeCloseTo(1760, 9);
  });

  it("no failure yet (attempt 0) waits 0 for the formula policies", () => {
    const random = scriptedRandom([0.5]);
    for (const kind of ["constant", "exponential", "google", "full-jitter", "grpc"] as const) {
      expect(nextDelay(POLICY_DEFAULTS[kind], 0, undefined, random)).toBe(0);
    }
  });
});

describe("nextDelay: exact sequences for a fixed seed", () => {
  const ATTEMPTS = 14;

  it("exponential", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    for (let n = 1; n <= ATTEMPTS; n++) {
      const base = Math.min(100 * 2.71828 ** n, 300_000);
      const expected = Math.max(0, base + twin.normal(0, 0.1 * base));
      expect(nextDelay(exponentialPolicy(), n, undefined, random)).toBe(expected);
    }
  });

  it("reference, chaining each wait into the next from a 10 s think time", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    let previous = 10_000;
    let expectedPrevious = 10_000;
    for (let n = 1; n <= ATTEMPTS; n++) {
      const expected = Math.max(0, Math.min(expectedPrevious * 2.71828, 300_000) + twin.normal(0, 100));
      const wait = nextDelay(referencePolicy(), n, previous, random);
      expect(wait).toBe(expected);
      previous = wait ?? Number.NaN;
      expectedPrevious = expected;
    }
    expect(previous).toBeGreaterThan(299_000); // reached the 5-minute cap
  });

  it("table", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    const table = [0, 10, 10, 100, 100, 500, 500, 3000, 3000, 5000];
    for (let n = 1; n <= ATTEMPTS; n++) {
      const m = table[Math.min(n, table.length - 1)] ?? Number.NaN;
      const expected = m === 0 ? 0 : Math.floor(m / 2) + twin.uniformInt(m);
      expect(nextDelay(tablePolicy(), n, undefined, random)).toBe(expected);
    }
  });

  it("google", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    for (let n = 1; n <= ATTEMPTS; n++) {
      const expected = n <= 5 ? 1000 * 2 ** (n - 1) + twin.uniformInt(1001) : undefined;
      expect(nextDelay(googlePolicy(), n, undefined, random)).toBe(expected);
    }
  });

  it("full, equal and decorrelated jitter", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    let previous: number | undefined;
    let expectedPrevious = 100;
    for (let n = 1; n <= ATTEMPTS; n++) {
      const temp = Math.min(300_000, 100 * 2 ** (n - 1));
      expect(nextDelay(fullJitterPolicy(), n, undefined, random)).toBe(twin.uniform() * temp);
      expect(nextDelay(equalJitterPolicy(), n, undefined, random)).toBe(temp / 2 + twin.uniform() * (temp / 2));
      const expected = Math.min(300_000, 100 + twin.uniform() * (3 * expectedPrevious - 100));
      const wait = nextDelay(decorrelatedJitterPolicy(), n, previous, random);
      expect(wait).toBe(expected);
      previous = wait;
      expectedPrevious = expected;
    }
  });

  it("grpc", () => {
    const [random, twin] = [seededRandom(SEED), seededRandom(SEED)];
    for (let n = 1; n <= ATTEMPTS; n++) {
      const b = Math.min(1000 * 1.6 ** (n - 1), 120_000);
      const expected = b * (1 + (-0.2 + 0.4 * twin.uniform()));
      expect(nextDelay(grpcPolicy(), n, undefined, random)).toBeCloseTo(expected, 6);
    }
  });

  it("the same seed gives the same waits; another seed does not", () => {
    const run = (seed: number): (number | undefined)[] => {
      const random = seededRandom(seed);
      return [1, 2, 3, 4, 5].map((n) => nextDelay(exponentialPolicy(), n, undefined, random));
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });
});

describe("nextDelay: distributions over 10 000 draws", () => {
  it("exponential: first retry ~271.8 ms; mean = base, sd = 10 % of base", () => {
    const first = summary(draw(exponentialPolicy(), 1));
    expect(first.mean).toBeGreaterThan(271.828 * 0.99);
    expect(first.mean).toBeLessThan(271.828 * 1.01);

    const base = 100 * 2.71828 ** 3;
    const third = summary(draw(exponentialPolicy(), 3));
    expect(Math.abs(third.mean - base) / base).toBeLessThan(0.01);
    expect(Math.abs(third.sd - 0.1 * base) / (0.1 * base)).toBeLessThan(0.05);
  });

  it("exponential: huge attempts stay at the cap, finite", () => {
    for (const attempt of [50, 1000, 1e6, Number.MAX_SAFE_INTEGER]) {
      const s = summary(draw(exponentialPolicy(), attempt));
      expect(Number.isFinite(s.max)).toBe(true);
      expect(Math.abs(s.mean - 300_000) / 300_000).toBeLessThan(0.01);
    }
    const noJitter = exponentialPolicy({ jitter: 0 });
    expect(nextDelay(noJitter, 1e9, undefined, seededRandom(SEED))).toBe(300_000);
    expect(nextDelay(exponentialPolicy({ minDelayMs: 0 }), 1e9, undefined, seededRandom(SEED))).toBe(0);
  });

  it("exponential with jitter 1 is clamped at 0, never negative", () => {
    const s = summary(draw(exponentialPolicy({ jitter: 1 }), 2));
    expect(s.min).toBe(0);
  });

  it("reference: mean previous * e, sd 100 ms absolute, capped", () => {
    const s = summary(draw(referencePolicy(), 1, 10_000));
    expect(Math.abs(s.mean - 10_000 * 2.71828)).toBeLessThan(5);
    expect(Math.abs(s.sd - 100)).toBeLessThan(5);
    const capped = summary(draw(referencePolicy(), 9, 1e12));
    expect(Math.abs(capped.mean - 300_000)).toBeLessThan(5);
    const fromZero = draw(referencePolicy(), 2, 0);
    expect(Math.min(...fromZero)).toBe(0);
    expect(fromZero.filter((w) => w === 0).length / DRAWS).toBeCloseTo(0.5, 1);
  });

  it("table: integers in [m/2, 1.5m), mean ~m, saturating at the last entry", () => {
    const policy = tablePolicy();
    const table = POLICY_DEFAULTS.table.delaysMs;
    for (let n = 1; n < table.length; n++) {
      const m = table[n] ?? Number.NaN;
      const waits = draw(policy, n);
      const s = summary(waits);
      expect(waits.every(Number.isInteger)).toBe(true);
      expect(s.min).toBeGreaterThanOrEqual(m / 2);
      expect(s.max).toBeLessThan(1.5 * m);
      // floor(m/2) + mean of 0..m-1 = m - 0.5 for even m.
      expect(Math.abs(s.mean - (m - 0.5)) / m).toBeLessThan(0.02);
    }
    const last = draw(policy, 9);
    expect(draw(policy, 10)).toEqual(last);
    expect(draw(policy, 1_000_000)).toEqual(last);
  });

  it("google: stops after 5 retries; totals in [31 s, 36 s], mean ~33.5 s", () => {
    const random = seededRandom(SEED);
    const policy = googlePolicy();
    const totals: number[] = [];
    const retryCounts = new Set<number>();
    let outOfRange = 0;
    for (let run = 0; run < DRAWS; run++) {
      let total = 0;
      let attempt = 1;
      for (let wait = nextDelay(policy, attempt, undefined, random); wait !== undefined;) {
        const floorMs = 1000 * 2 ** (attempt - 1);
        if (wait < floorMs || wait > floorMs + 1000) outOfRange += 1;
        total += wait;
        attempt += 1;
        wait = nextDelay(policy, attempt, undefined, random);
      }
      retryCounts.add(attempt - 1);
      totals.push(total);
    }
    expect(outOfRange).toBe(0);
    expect([...retryCounts]).toEqual([5]);
    const s = summary(totals);
    expect(s.min).toBeGreaterThanOrEqual(31_000);
    expect(s.max).toBeLessThanOrEqual(36_000);
    expect(Math.abs(s.mean - 33_500)).toBeLessThan(50);
  });

  it("full jitter: in [0, temp), mean temp/2; cap respected", () => {
    const s = summary(draw(fullJitterPolicy(), 5)); // temp = 1600
    expect(s.min).toBeGreaterThanOrEqual(0);
    expect(s.max).toBeLessThan(1600);
    expect(Math.abs(s.mean - 800)).toBeLessThan(20);
    const capped = summary(draw(fullJitterPolicy(), 1e6));
    expect(capped.max).toBeLessThan(300_000);
    expect(Math.abs(capped.mean - 150_000)).toBeLessThan(3000);
  });

  it("equal jitter: in [temp/2, temp), mean 3/4 temp", () => {
    const s = summary(draw(equalJitterPolicy(), 5));
    expect(s.min).toBeGreaterThanOrEqual(800);
    expect(s.max).toBeLessThan(1600);
    expect(Math.abs(s.mean - 1200)).toBeLessThan(10);
    const capped = summary(draw(equalJitterPolicy(), 1e6));
    expect(capped.min).toBeGreaterThanOrEqual(150_000);
    expect(capped.max).toBeLessThan(300_000);
  });

  it("decorrelated jitter: each wait in [base, min(cap, 3 * previous)]", () => {
    const policy = decorrelatedJitterPolicy({ baseMs: 100, capMs: 20_000 });
    const random = seededRandom(SEED);
    let previous: number | undefined;
    let atCap = 0;
    let outOfRange = 0;
    for (let i = 0; i < DRAWS; i++) {
      const wait = nextDelay(policy, i + 1, previous, random) ?? Number.NaN;
      if (!(wait >= 100 && wait <= Math.min(20_000, 3 * (previous ?? 100)))) outOfRange += 1;
      if (wait === 20_000) atCap += 1;
      previous = wait;
    }
    expect(outOfRange).toBe(0);
    expect(atCap).toBeGreaterThan(0); // the cap is reached and holds
  });

  it("grpc: within b * (1 ± 0.2), mean b; capped at 2 min", () => {
    const s = summary(draw(grpcPolicy(), 3)); // b = 2560
    expect(s.min).toBeGreaterThanOrEqual(2048);
    expect(s.max).toBeLessThanOrEqual(3072);
    expect(Math.abs(s.mean - 2560)).toBeLessThan(10);
    const capped = summary(draw(grpcPolicy(), 1e6));
    expect(capped.min).toBeGreaterThanOrEqual(96_000);
    expect(capped.max).toBeLessThanOrEqual(144_000);
  });

  it("every policy gives finite, non-negative waits at every attempt", () => {
    const random = seededRandom(SEED);
    const bad: string[] = [];
    for (const policy of Object.values(POLICY_DEFAULTS)) {
      let previous: number | undefined;
      for (const attempt of [0, 1, 2, 3, 5, 8, 13, 100, 10_000, 1e15]) {
        for (let i = 0; i < 100; i++) {
          const wait = nextDelay(policy, attempt, previous, random);
          if (wait === undefined) {
            if (policy.kind !== "google") bad.push(`${policy.kind}@${attempt}: undefined`);
            continue;
          }
          if (!(Number.isFinite(wait) && wait >= 0)) bad.push(`${policy.kind}@${attempt}: ${wait}`);
          previous = wait;
        }
      }
    }
    expect(bad).toEqual([]);
  });
});

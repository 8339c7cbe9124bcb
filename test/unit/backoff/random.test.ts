import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/backoff/random.ts";

const draws = (count: number, draw: () => number) => Array.from({ length: count }, draw);
const minimum = (values: number[]) => values.reduce((low, value) => Math.min(low, value), Infinity);
const maximum = (values: number[]) => values.reduce((high, value) => Math.max(high, value), -Infinity);
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const standardDeviation = (values: number[]) => {
  const average = mean(values);
  return Math.sqrt(mean(values.map((value) => (value - average) ** 2)));
};

describe("seededRandom", () => {
  it("gives the same sequence for the same seed and another for another seed", () => {
    const first = seededRandom(42);
    const second = seededRandom(42);
    const other = seededRandom(43);
    const sequence = draws(100, () => first.uniform());
    expect(draws(100, () => second.uniform())).toEqual(sequence);
    expect(draws(100, () => other.uniform())).not.toEqual(sequence);
  });

  it("mixes small seeds: the first draw of seeds 0..1999 is uniform", () => {
    const firsts = Array.from({ length: 2000 }, (_, seed) => seededRandom(seed).uniform());
    expect(mean(firsts)).toBeGreaterThan(0.47);
    expect(mean(firsts)).toBeLessThan(0.53);
    expect(firsts.filter((value) => value > 0.99).length).toBeLessThan(40);
  });

  it("draws uniform values in [0, 1) and integers in [0, n)", () => {
    const random = seededRandom(1);
    const values = draws(100_000, () => random.uniform());
    expect(minimum(values)).toBeGreaterThanOrEqual(0);
    expect(maximum(values)).toBeLessThan(1);
    expect(mean(values)).toBeCloseTo(0.5, 2);
    const integers = draws(100_000, () => random.uniformInt(7));
    expect(new Set(integers)).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
  });

  it("draws exponential values with the requested mean", () => {
    const random = seededRandom(2);
    const values = draws(200_000, () => random.exponential(10));
    expect(minimum(values)).toBeGreaterThanOrEqual(0);
    expect(mean(values)).toBeGreaterThan(9.9);
    expect(mean(values)).toBeLessThan(10.1);
    expect(standardDeviation(values)).toBeGreaterThan(9.8); // exponential: sd = mean
    expect(standardDeviation(values)).toBeLessThan(10.2);
  });

  it("draws normal values with the requested mean and standard deviation", () => {
    const random = seededRandom(3);
    const values = draws(200_000, () => random.normal(5, 2));
    expect(mean(values)).toBeCloseTo(5, 1);
    expect(standardDeviation(values)).toBeGreaterThan(1.98);
    expect(standardDeviation(values)).toBeLessThan(2.02);
    const withinOneSd = values.filter((value) => Math.abs(value - 5) < 2).length / values.length;
    expect(withinOneSd).toBeGreaterThan(0.675);
    expect(withinOneSd).toBeLessThan(0.69);
  });
});

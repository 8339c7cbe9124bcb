import { describe, expect, it } from "vitest";
import { seededRandom, streamRandom } from "../../../src/backoff/random.ts";

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

describe("streamRandom", () => {
  it("gives each (seed, stream) its own sequence, the same however the streams are made", () => {
    const sequence = (seed: number, stream: number) => {
      const random = streamRandom(seed, stream);
      return draws(50, () => random.uniform());
    };
    const first = streamRandom(7, 3);
    const values = draws(50, () => first.uniform());
    // Made after others, or alone: the same draws.
    streamRandom(7, 2).uniform();
    const again = streamRandom(7, 3);
    expect(draws(50, () => again.uniform())).toEqual(values);
    expect(sequence(7, 4)).not.toEqual(values);
    expect(sequence(8, 3)).not.toEqual(values);
  });

  it("gives neighbouring streams unrelated draws: the first draw of streams 0..4999 is uniform and uncorrelated", () => {
    const firsts = Array.from({ length: 5000 }, (_, stream) => streamRandom(1, stream).uniform());
    expect(mean(firsts)).toBeGreaterThan(0.48);
    expect(mean(firsts)).toBeLessThan(0.52);
    expect(new Set(firsts).size).toBe(firsts.length);
    // Lag-1 correlation between neighbouring streams: near zero for unrelated streams.
    const average = mean(firsts);
    const covariance = mean(firsts.slice(1).map((value, index) => (value - average) * (firsts[index]! - average)));
    expect(Math.abs(covariance / standardDeviation(firsts) ** 2)).toBeLessThan(0.05);
    // Streams beyond 2^32 are distinct from those below.
    expect(streamRandom(1, 2 ** 32 + 5).uniform()).not.toBe(streamRandom(1, 5).uniform());
  });

  it("draws the same distributions as seededRandom", () => {
    const random = streamRandom(3, 9);
    const exponentials = draws(20_000, () => random.exponential(10));
    expect(mean(exponentials)).toBeGreaterThan(9.6);
    expect(mean(exponentials)).toBeLessThan(10.4);
    const normals = draws(20_000, () => random.normal(5, 2));
    expect(mean(normals)).toBeCloseTo(5, 1);
    expect(standardDeviation(normals)).toBeCloseTo(2, 1);
  });
});

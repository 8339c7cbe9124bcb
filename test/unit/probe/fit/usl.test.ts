import { describe, expect, it } from "vitest";
import { FAMILY_NOISE_FLOOR, fitModels } from "../../../../src/probe/fit/fit-models.ts";
import type { StepMeasure } from "../../../../src/probe/fit/step-measure.ts";
import { fallsPastPeak, fitUsl, measuredPeak, uslLines, uslThroughputPerSec } from "../../../../src/probe/fit/usl.ts";
import { closedLoopStep, SERVER_CURVE_CASES, serverSteps } from "../../../helpers/server-steps.ts";

/** Steps that follow a USL curve exactly. */
function uslSteps(parameters: { lambdaPerSec: number; sigma: number; kappa: number }, concurrencies: readonly number[]): StepMeasure[] {
  return concurrencies.map((concurrency) => closedLoopStep(concurrency, uslThroughputPerSec(parameters, concurrency), 100));
}

describe("the Universal Scalability Law", () => {
  it("recovers σ, κ and λ from a USL service's steps, and its peak N* = √((1 − σ) ÷ κ)", () => {
    const truth = { lambdaPerSec: 50, sigma: 0.05, kappa: 0.002 };
    const fit = fitUsl(uslSteps(truth, [1, 2, 4, 8, 16, 24, 32, 48]));
    expect(fit.lambdaPerSec).toBeCloseTo(50, 3);
    expect(fit.sigma).toBeCloseTo(0.05, 4);
    expect(fit.kappa).toBeCloseTo(0.002, 5);
    expect(fit.peakConcurrency).toBeCloseTo(Math.sqrt(0.95 / 0.002), 2);
    expect(fit.throughputError).toBeLessThan(1e-4);
  });

  it("tells a service whose throughput falls past a peak (./server's exponential model, on the virtual clock) from one that levels off (its queue)", async () => {
    const [queueCase, , exponentialCase] = SERVER_CURVE_CASES;
    const falling = await serverSteps(exponentialCase!);
    const level = await serverSteps(queueCase!);
    expect(fallsPastPeak(falling, FAMILY_NOISE_FLOOR)).toBeDefined();
    expect(fallsPastPeak(level, FAMILY_NOISE_FLOOR)).toBeUndefined();
    const fallingFit = fitUsl(falling);
    // Its throughput peaks at k ÷ ln(factor) = 7.2 users: the USL's peak is near it, with coherency above 0.
    expect(fallingFit.kappa).toBeGreaterThan(0);
    expect(fallingFit.peakConcurrency).toBeGreaterThan(4);
    expect(fallingFit.peakConcurrency).toBeLessThan(12);
    const [, verdict] = uslLines(falling, fallingFit, 4, { kind: "exponential", error: 0.01, isUsl: false }, FAMILY_NOISE_FLOOR);
    expect(verdict).toMatch(
      /^USL or exponential: the exponential fits it better by more than the picker's 5\.0 % floor .*; the throughput falls past its peak \([\d.]+ req\/s at \d+ users, [\d.]+ at 12\), as the USL's does with κ above 0 and no queue's/,
    );
    const [, levelVerdict] = uslLines(level, fitUsl(level), 4, { kind: "queue", error: 0.01, isUsl: false }, FAMILY_NOISE_FLOOR);
    expect(levelVerdict).toMatch(/^USL or queue: the picked queue describes it as well or better .*levels off or still grows/);
  });

  it("says the USL describes a service better than a fit that misses its bend", () => {
    const steps = uslSteps({ lambdaPerSec: 50, sigma: 0.05, kappa: 0.002 }, [1, 2, 4, 8, 16]);
    const [line, verdict] = uslLines(steps, fitUsl(steps), 20, { kind: "queue", error: 0.2, isUsl: false }, FAMILY_NOISE_FLOOR);
    expect(line).toMatch(
      /^USL \(Gunther\): λ 50 req\/s per user, σ 0\.05, κ 0\.002; peak at 21\.8 users \(\S+ req\/s\), beside the queue model's 20 threads/,
    );
    expect(verdict).toMatch(
      /^USL or queue: the USL describes it better \(error 0\.0 % against 20\.0 %\); the throughput levels off or still grows/,
    );
  });

  it("picks the USL for a USL service whose throughput falls, and says why, its peak beside the measured one", () => {
    // Steps every 8 users around a peak at 21.8: the parabola through the top's three steps puts it
    // at 23.1, where the best step says 24 (the USL's top is not a parabola's: it falls slower past its peak).
    const steps = uslSteps({ lambdaPerSec: 50, sigma: 0.05, kappa: 0.002 }, [1, 2, 4, 8, 16, 24, 32, 48]);
    const fit = fitModels(steps);
    expect(fit.chosen.spec.kind).toBe("usl");
    const [, verdict] = uslLines(steps, fitUsl(steps), 20, { kind: "usl", error: 0, isUsl: true }, FAMILY_NOISE_FLOOR);
    expect(verdict).toMatch(
      /^USL picked: the throughput falls past its peak \(\S+ req\/s at 24 users, \S+ at 48, [\d.]+ % below: more than the picker's 5\.0 % floor\), .*; peak at 21\.8 users fitted, 23\.1 measured \(the vertex of a parabola through the steps within 10\.0 % of the best, 16, 24, 32 users; the best step 24\) \(-5\.6 %\); the scenario takes it as -model usl -baseDelay 20ms -usl-sigma 0\.05 -usl-kappa 0\.002$/,
    );
  });

  it("measures the peak as the vertex of a parabola through the top's steps, else the middle of a level top, else the best step", () => {
    const at = (points: readonly (readonly [number, number])[]) =>
      points.map(([concurrency, throughputPerSec]) => ({ concurrency, throughputPerSec }) as StepMeasure);
    // A parabola's own points, peak at 10: exactly.
    const parabola = measuredPeak(at([6, 8, 10, 12, 14].map((n) => [n, 300 - (n - 10) ** 2] as const)));
    expect(parabola.how).toBe("vertex");
    expect(parabola.concurrency).toBeCloseTo(10, 9);
    // A run on the retrograde service whose noise made 12 the best: the vertex weighs the top's six steps, 10.95.
    const curved = measuredPeak(
      at([
        [4, 150],
        [8, 196],
        [10, 203.7],
        [11, 206.3],
        [12, 211.8],
        [13, 201.2],
        [14, 192.6],
        [16, 160],
      ]),
    );
    expect(curved).toMatchObject({ how: "vertex", best: 12, top: [8, 10, 11, 12, 13, 14] });
    expect(curved.concurrency).toBeCloseTo(10.95, 2);
    // A run whose top is level within the noise, 8 the best by 5 %: no parabola curves down there; its middle, 9.5.
    const level = measuredPeak(
      at([
        [6, 170.6],
        [7, 187.2],
        [8, 196.9],
        [9, 187.1],
        [10, 187.1],
        [12, 187.7],
        [16, 169.1],
      ]),
    );
    expect(level).toMatchObject({ how: "middle", concurrency: 9.5, best: 8, top: [7, 8, 9, 10, 12] });
    // The best step alone within 10 %.
    expect(
      measuredPeak(
        at([
          [4, 100],
          [8, 200],
          [12, 150],
        ]),
      ),
    ).toMatchObject({ how: "best", concurrency: 8 });
  });
});

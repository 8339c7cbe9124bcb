import { describe, expect, it } from "vitest";
import { FAMILY_NOISE_FLOOR, fitModels } from "../../../src/probe/fit/fit-models.ts";
import type { StepMeasure } from "../../../src/probe/fit/step-measure.ts";
import { dips, stepsAroundPeak } from "../../../src/probe/probe-run.ts";
import { SERVER_CURVE_CASES, serverSteps, SHORT_STEP_LIMITS } from "../../helpers/server-steps.ts";

/*
 * The probe goes past saturation to twice the level's users (docs/probe.md, "Stops at saturation"): a queue's
 * throughput stays level there, a retrograde service's falls. The real ./server's curves on the
 * virtual clock (test/helpers/server-steps.ts), with the probe's own rule: the steps repeat exactly.
 */

const RULE = { minGrowth: 0.1, maxP99Ms: Infinity, maxErrors: 0.05 };
const concurrencies = async (index: number) =>
  (await serverSteps(SERVER_CURVE_CASES[index]!, SHORT_STEP_LIMITS, RULE)).map((step) => step.concurrency);

describe("the probe's step past saturation", () => {
  it("goes past the first step that does not grow by more than -min-growth to twice its users, where the throughput does not fall", async () => {
    // The queue server: 6 users no faster than 4 (152 req/s against 160), 8 and 12 level again (160).
    const queue = { ...SERVER_CURVE_CASES[0]!, steps: [1, 2, 3, 4, 6, 8, 12, 16, 24] };
    const steps = await serverSteps(queue, SHORT_STEP_LIMITS, RULE);
    expect(steps.map((step) => step.concurrency)).toEqual([1, 2, 3, 4, 6, 8, 12]);
    // The linear server's throughput grows by more than 10 % at every step: none saturates, the list ends.
    expect(await concurrencies(1)).toEqual([1, 2, 4, 6, 8, 12]);
  });

  it("goes on past the level while its steps are the best so far, until the throughput falls, then finds the peak between the steps", async () => {
    // The exponential server: 5 levels (217.6 req/s, 8.8 % over 4's), 6 (227.4) and 8 (229.7) are the
    // best yet, 10 falls past the floor (217.6, 5.3 % below 8's): then 7 and 9, either side of the best.
    const exponential = { ...SERVER_CURVE_CASES[2]!, steps: [1, 2, 4, 5, 6, 8, 10, 12] };
    const steps = await serverSteps(exponential, SHORT_STEP_LIMITS, RULE);
    expect(steps.map((step) => step.concurrency)).toEqual([1, 2, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("sees the exponential server's throughput fall past its peak, finds the peak between the steps, and picks a curve that falls", async () => {
    const steps = await serverSteps(SERVER_CURVE_CASES[2]!, SHORT_STEP_LIMITS, RULE);
    // Saturated at 8 (229.7 req/s, 1 % over 6's); at 10 it falls 5.3 %, past the picker's 5 % floor.
    // Then 7 and 9, halfway from the best (8) to its neighbours: 7 is the peak (230.9), and 6 and 8
    // are its neighbours, measured, so the second round takes no step.
    expect(steps.map((step) => step.concurrency)).toEqual([1, 2, 4, 6, 7, 8, 9, 10]);
    const fit = fitModels(steps);
    expect(fit.fall).toMatchObject({ best: { concurrency: 7 }, last: { concurrency: 10 } });
    // The exponential curve fits its own server exactly, the USL within the 5 % floor between
    // families (4.9 %): within the noise of a real service, so the USL is picked (fit-models.ts).
    expect(Math.sqrt(fit.fits[2]!.meanSquare)).toBeLessThan(0.001);
    expect(Math.sqrt(fit.usl.meanSquare)).toBeLessThan(FAMILY_NOISE_FLOOR);
    expect(fit.chosen.spec.kind).toBe("usl");
  });

  it("takes the concurrencies halfway from the best step to its neighbours, those not yet measured", () => {
    const at = (...concurrencies: number[]) => concurrencies.map((concurrency) => ({ concurrency }) as StepMeasure);
    expect(stepsAroundPeak(at(1, 2, 4, 6, 8, 12, 16), 8)).toEqual([7, 10]);
    expect(stepsAroundPeak(at(1, 2, 4, 6, 7, 8, 10, 12, 16), 8)).toEqual([9]);
    expect(stepsAroundPeak(at(4, 8), 4)).toEqual([2, 6]);
    expect(stepsAroundPeak(at(7, 8, 9), 8)).toEqual([]);
  });

  it("takes a step more than 10 % below both its neighbours for a hiccup to measure again, and no other", () => {
    const at = (...points: (readonly [number, number])[]) =>
      points.map(([concurrency, throughputPerSec]) => ({ concurrency, throughputPerSec }) as StepMeasure);
    // The run that found it: 13 users at 89.5 req/s between 181.7 at 12 and 175.5 at 14.
    expect(dips(at([10, 174.2], [11, 191.2], [12, 181.7], [13, 89.5], [14, 175.5], [16, 174.4], [24, 136.3]))).toEqual([13]);
    // A fall past a peak, a level, a step 9 % below both, and the ends: none.
    expect(dips(at([8, 200], [12, 180], [16, 150], [24, 100]))).toEqual([]);
    expect(dips(at([4, 160], [6, 146], [8, 160], [12, 160]))).toEqual([]);
    expect(dips(at([1, 10], [2, 200], [4, 100]))).toEqual([]);
  });
});

import { levenbergMarquardt } from "ml-levenberg-marquardt";
import { DEFAULT_LATENCY_MODEL } from "../../model/latency.ts";
import { significant } from "../../model/servers/kind.ts";
import { modelOf, type ServerModelSpec } from "../../model/servers/models.ts";
import { closedLoopLatencyMs, closedLoopThroughputPerSec } from "./closed-loop-curve.ts";
import { type ServiceSpread, serviceSpread } from "./service-spread.ts";
import type { StepMeasure } from "./step-measure.ts";
import { fallsPastPeak, type PeakFall, fitUsl, uslSpec } from "./usl.ts";

/**
 * Fits each server model to a probe's steps: the model's closed-loop latency and throughput
 * (closed-loop-curve.ts) against the measured ones, by least squares on relative errors, with
 * the Levenberg-Marquardt solver of ml-levenberg-marquardt. The continuous parameters are
 * the solver's (in logarithms, so they stay positive and their steps scale with them); the
 * integer ones (the queue's threads, the exponential model's limit) are tried one by one,
 * since the curves bend at them and a gradient cannot find a kink. Only ln(factor) ÷ k shapes
 * the exponential curve, so k stays the reference server's 15 and the factor is fitted.
 * The queue model also fits the time a request spends outside the service's threads
 * (closed-loop-curve.ts): a real client's round trip includes it, and without it the extra
 * milliseconds at low concurrency would pass for a longer service time and more threads.
 */
export interface ModelFit {
  readonly spec: ServerModelSpec;
  /**
   * Time a request spends outside the service (network, client, connection set-up), ms:
   * fitted for the queue model, whose threads it does not hold; 0 for the shared-delay
   * models, whose baseDelay takes it in.
   */
  readonly overheadMs: number;
  /** Parameters fitted (the information criterion charges for each). */
  readonly parameters: number;
  /** Root mean square of (model − measured) ÷ measured over the steps' mean latencies. */
  readonly latencyError: number;
  /** The same over their throughputs. */
  readonly throughputError: number;
  /** The mean of the squared relative errors, latency and throughput together. */
  readonly meanSquare: number;
  /** Akaike's criterion on both relative errors, with a noise floor (lower is better). */
  readonly score: number;
}

export interface FitResult {
  /** One per model, in the order queue, linear, exponential: on a tie the first is picked, the commonest in real services. */
  readonly fits: readonly ModelFit[];
  /** The Universal Scalability Law (usl.ts) as a server model, picked only where the throughput falls past a peak. */
  readonly usl: ModelFit;
  /** Where the measured throughput falls past its best step by more than FAMILY_NOISE_FLOOR; undefined where it does not. */
  readonly fall: PeakFall | undefined;
  readonly chosen: ModelFit;
  readonly spread: ServiceSpread;
}

/** Steps a fit needs: three points on the curve at least. */
export const MIN_STEPS_TO_FIT = 3;

/**
 * Relative errors below this are measurement noise, not a better model: without a floor a
 * model with one more parameter that follows the noise exactly would always win.
 */
const NOISE_FLOOR = 0.02;
/**
 * Between model families the floor is higher: a real service's steps, on a machine shared with
 * other work, move by several percent from run to run (a soft knee, a slow step), which a
 * family with a bend in another place can follow as well as the right one. Within 5 % the
 * simpler family, and on a tie the queue, is taken.
 */
export const FAMILY_NOISE_FLOOR = 0.05;

/** Akaike's criterion for least squares, n × ln(mean square) + 2 × parameters, the mean square no lower than floor². */
function criterion(residuals: number, meanSquare: number, parameters: number, floor: number): number {
  return residuals * Math.log(Math.max(meanSquare, floor ** 2)) + 2 * parameters;
}

/**
 * Fits every model to the steps and picks the one with the lowest information criterion.
 * Where the throughput falls past its best step by more than the floor between families, the
 * queue and the linear model are out (their throughput only levels off), and the pick is
 * between the two curves that fall (fallingPick).
 */
export function fitModels(steps: readonly StepMeasure[]): FitResult {
  if (steps.length < MIN_STEPS_TO_FIT) throw new RangeError(`fitting needs at least ${MIN_STEPS_TO_FIT} steps, got ${steps.length}`);
  const spread = serviceSpread(steps);
  // Each fit as it is printed and written (three significant digits), and scored as such.
  const fits = [fitQueue(steps, spread), fitLinear(steps), fitExponential(steps)].map((fit) =>
    scored(steps, roundedSpec(fit.spec), fit.parameters, significant(fit.overheadMs, 3)),
  );
  const usl = scored(steps, roundedSpec(uslSpec(fitUsl(steps))), 3);
  const fall = fallsPastPeak(steps, FAMILY_NOISE_FLOOR);
  const familyScore = (fit: ModelFit) => criterion(steps.length * 2, fit.meanSquare, fit.parameters, FAMILY_NOISE_FLOOR);
  const chosen =
    fall === undefined ? fits.reduce((best, fit) => (familyScore(fit) < familyScore(best) ? fit : best)) : fallingPick(usl, fits[2]!);
  return { fits, usl, fall, chosen, spread };
}

/**
 * Of the two curves that fall, the USL, unless the exponential model's root mean square error is
 * below its own by more than the floor (in points: 5 % against 4.9 % is a tie). On the real
 * retrograde service the two differ by less than that from run to run, and so do they on
 * ./server's exponential curve probed on the real clock, which is then taken for the USL; on the
 * virtual clock (no noise) the exponential fits it exactly and the USL by more than the floor off
 * (docs/probe.md, "Out of sample").
 */
function fallingPick(usl: ModelFit, exponential: ModelFit): ModelFit {
  return Math.sqrt(usl.meanSquare) - Math.sqrt(exponential.meanSquare) > FAMILY_NOISE_FLOOR ? exponential : usl;
}

/** The queue model: for each thread count up to the highest concurrency measured (and one beyond), the best service time and overhead. */
export function fitQueue(steps: readonly StepMeasure[], spread: ServiceSpread): ModelFit {
  const highest = Math.max(...steps.map((step) => step.concurrency));
  const makeSpec = (threads: number, serviceTimeMs: number): ServerModelSpec => ({
    kind: "queue",
    pool: { threads, serviceTimeMs, serviceDist: spread.dist, serviceSigma: spread.sigma, queueOrder: "fifo", queueLimit: Infinity },
  });
  const lowest = lowestLatency(steps);
  const fits: ModelFit[] = [];
  for (let threads = 1; threads <= highest + 1; threads++) {
    const [serviceTimeMs, overheadMs] = solve(steps, [0.9 * lowest, 0.1 * lowest], ([time]) => makeSpec(threads, time!), 1);
    fits.push(scored(steps, makeSpec(threads, serviceTimeMs!), 3, overheadMs!));
  }
  // Mean latencies pin down threads ÷ service time (the saturated throughput) and service
  // time + overhead (the latency below saturation), not the threads themselves: fewer
  // threads with more time outside fit as well. Of the fits as good as the best (within 2 of
  // its criterion), the one with the most threads, whose overhead is the least, is taken.
  const bestScore = Math.min(...fits.map((fit) => fit.score));
  return fits.filter((fit) => fit.score <= bestScore + EQUALLY_GOOD).at(-1)!;
}

/** Fits whose criteria differ by less than this are as good as each other (Burnham & Anderson's rule of thumb). */
const EQUALLY_GOOD = 2;

/** The linear model: baseDelay and slope. */
export function fitLinear(steps: readonly StepMeasure[]): ModelFit {
  const makeSpec = (baseDelayMs: number, slopeMs: number): ServerModelSpec => ({
    kind: "linear",
    latency: { kind: "linear", baseDelayMs, slopeMs },
  });
  const base = lowestLatency(steps);
  const [baseDelayMs, slopeMs] = solve(steps, [base, Math.max(base / 10, 1e-3)], ([delay, slope]) => makeSpec(delay!, slope!));
  return scored(steps, makeSpec(baseDelayMs!, slopeMs!), 2);
}

/** The exponential model: for each limit, baseDelay and the growth above it. */
export function fitExponential(steps: readonly StepMeasure[]): ModelFit {
  const k = DEFAULT_LATENCY_MODEL.exponentDivisor;
  // Two steps above the limit at least, or the growth has nothing to fit (and the solver's matrix is singular).
  const concurrencies = steps.map((step) => step.concurrency).sort((a, b) => a - b);
  const highestLimit = concurrencies[concurrencies.length - 2]!;
  // Growth per request above the limit, ln(factor) ÷ k; a factor of 1 would have none.
  const makeSpec = (limit: number, baseDelayMs: number, growth: number): ServerModelSpec => ({
    kind: "exponential",
    latency: { baseDelayMs, limit, factor: Math.exp(growth * k), exponentDivisor: k },
  });
  let best: ModelFit | undefined;
  for (let limit = 0; limit < highestLimit; limit++) {
    const [baseDelayMs, growth] = solve(steps, [lowestLatency(steps), 0.05], ([delay, rate]) => makeSpec(limit, delay!, rate!));
    const fit = scored(steps, makeSpec(limit, baseDelayMs!, growth!), 3);
    if (best === undefined || fit.score < best.score) best = fit;
  }
  return best!;
}

function lowestLatency(steps: readonly StepMeasure[]): number {
  return steps.reduce((lowest, step) => (step.concurrency < lowest.concurrency ? step : lowest)).meanLatencyMs;
}

/**
 * Least squares of the relative errors of latency and throughput at every step, over
 * positive parameters: the solver works on their logarithms. Residual i < n is step i's
 * latency, n + i its throughput; each is model ÷ measured, fitted to 1. With `overheadAt`,
 * that parameter is the overhead (closedLoopLatencyMs) rather than the model's.
 */
function solve(
  steps: readonly StepMeasure[],
  initial: readonly number[],
  makeSpec: (parameters: readonly number[]) => ServerModelSpec,
  overheadAt?: number,
): number[] {
  const ratio = (logs: readonly number[]) => {
    const values = logs.map(Math.exp);
    const spec = makeSpec(values);
    const overheadMs = overheadAt === undefined ? 0 : values[overheadAt]!;
    return (index: number) => relativeModelValue(spec, steps, index, overheadMs);
  };
  const x = Array.from({ length: steps.length * 2 }, (_, index) => index);
  const options = {
    initialValues: initial.map(Math.log),
    minValues: initial.map(() => Math.log(1e-9)),
    maxValues: initial.map(() => Math.log(1e9)),
    gradientDifference: 1e-4,
    centralDifference: true,
    // The solver stops early only when the squares' sum reaches errorTolerance, which measured
    // steps never do, so it runs every iteration: two or three parameters settle within 20 (fits
    // of measured steps came out the same at 20, 30, 50 and 200), and 50 leave room at a quarter
    // of 200's time (a probe up to 128 users fitted in 2.2 s of a loaded machine's CPU with 200).
    maxIterations: 50,
    errorTolerance: 1e-12,
  };
  try {
    return levenbergMarquardt({ x, y: x.map(() => 1) }, ratio, options).parameterValues.map(Math.exp);
  } catch {
    // On steps whose throughput falls steeply (past a knee, or a slow step on a loaded machine)
    // the exponential curve's growth can overflow and the solver's matrix turn singular ("LU
    // matrix is singular"): the starting guess stands, scored as it is, below any curve that fits.
    return [...initial];
  }
}

function relativeModelValue(spec: ServerModelSpec, steps: readonly StepMeasure[], index: number, overheadMs: number): number {
  const step = steps[index % steps.length]!;
  return index < steps.length
    ? closedLoopLatencyMs(spec, step.concurrency, overheadMs) / step.meanLatencyMs
    : closedLoopThroughputPerSec(spec, step.concurrency, overheadMs) / step.throughputPerSec;
}

function scored(steps: readonly StepMeasure[], spec: ServerModelSpec, parameters: number, overheadMs = 0): ModelFit {
  const squares = (from: number) => steps.map((_, index) => (relativeModelValue(spec, steps, from + index, overheadMs) - 1) ** 2);
  const latencySquares = squares(0);
  const throughputSquares = squares(steps.length);
  const rms = (values: readonly number[]) => Math.sqrt(values.reduce((sum, value) => sum + value, 0) / values.length);
  const all = [...latencySquares, ...throughputSquares];
  const meanSquare = all.reduce((sum, value) => sum + value, 0) / all.length;
  const score = criterion(all.length, meanSquare, parameters, NOISE_FLOOR);
  return { spec, overheadMs, parameters, latencyError: rms(latencySquares), throughputError: rms(throughputSquares), meanSquare, score };
}

/** A fitted model with its continuous parameters to three significant digits (the factor to four), as flags state it. */
export function roundedSpec(spec: ServerModelSpec): ServerModelSpec {
  return modelOf(spec).rounded(spec);
}

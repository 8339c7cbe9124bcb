import { levenbergMarquardt } from "ml-levenberg-marquardt";
import { usl, type UslSpec } from "../../model/servers/kinds/usl.ts";
import type { StepMeasure } from "./step-measure.ts";

/**
 * Neil Gunther's Universal Scalability Law, as codahale/usl and the R `usl` package fit it: the
 * throughput of N users (a closed loop without think time) is
 *
 *   X(N) = λ N / (1 + σ (N − 1) + κ N (N − 1))
 *
 * λ the throughput of one user, σ contention (the share that serialises: a queue), κ coherency
 * (the cost of keeping N in step, which makes the throughput fall past a peak at
 * N* = √((1 − σ) ÷ κ)). Fitted here beside the server models, by least squares on the relative
 * errors of throughput and of latency (N ÷ X, by Little's law), as they are fitted.
 */
export interface UslFit {
  readonly lambdaPerSec: number;
  readonly sigma: number;
  readonly kappa: number;
  /** N*, where the throughput peaks; Infinity when κ is 0 (it only levels off). */
  readonly peakConcurrency: number;
  readonly peakThroughputPerSec: number;
  /** Root mean square of (model − measured) ÷ measured: latency and throughput, each over the steps. */
  readonly latencyError: number;
  readonly throughputError: number;
  /** The mean of the squared relative errors, latency and throughput together (as ModelFit's). */
  readonly meanSquare: number;
}

export function uslThroughputPerSec(fit: Pick<UslFit, "lambdaPerSec" | "sigma" | "kappa">, concurrency: number): number {
  return (fit.lambdaPerSec * concurrency) / (1 + fit.sigma * (concurrency - 1) + fit.kappa * concurrency * (concurrency - 1));
}

/** Below this a fitted σ or κ is the solver's floor, not a figure: shown as 0. */
const NEGLIGIBLE = 1e-6;

/** The USL fitted to the steps (three at least, as the server models need). */
export function fitUsl(steps: readonly StepMeasure[]): UslFit {
  const lowest = steps.reduce((low, step) => (step.concurrency < low.concurrency ? step : low));
  // λ starts at the lowest step's throughput per user; σ and κ small and positive (the solver works on logarithms).
  const initial = [lowest.throughputPerSec / lowest.concurrency, 0.05, 0.001];
  const modelOf = ([lambdaPerSec, sigma, kappa]: readonly number[]) => ({ lambdaPerSec: lambdaPerSec!, sigma: sigma!, kappa: kappa! });
  const ratio = (index: number, parameters: readonly number[]) => {
    const step = steps[index % steps.length]!;
    const throughput = uslThroughputPerSec(modelOf(parameters), step.concurrency);
    // The model's latency by Little's law, N ÷ X, against the measured mean; then its throughput against the measured.
    return index < steps.length ? (step.concurrency * 1000) / throughput / step.meanLatencyMs : throughput / step.throughputPerSec;
  };
  const x = Array.from({ length: steps.length * 2 }, (_, index) => index);
  let parameters = initial;
  try {
    parameters = levenbergMarquardt({ x, y: x.map(() => 1) }, (logs: number[]) => (index: number) => ratio(index, logs.map(Math.exp)), {
      initialValues: initial.map(Math.log),
      minValues: [Math.log(1e-9), Math.log(1e-12), Math.log(1e-12)],
      maxValues: [Math.log(1e9), 0, Math.log(10)],
      gradientDifference: 1e-4,
      centralDifference: true,
      maxIterations: 100,
      errorTolerance: 1e-12,
    }).parameterValues.map(Math.exp);
  } catch {
    // A singular matrix on steps the curve cannot follow: the starting guess stands, scored as it is.
  }
  const [lambdaPerSec, rawSigma, rawKappa] = parameters as [number, number, number];
  const sigma = rawSigma < NEGLIGIBLE ? 0 : rawSigma;
  const kappa = rawKappa < NEGLIGIBLE ? 0 : rawKappa;
  const fit = { lambdaPerSec, sigma, kappa };
  const peakConcurrency = kappa === 0 ? Infinity : Math.sqrt((1 - sigma) / kappa);
  const residuals = x.map((index) => (ratio(index, [lambdaPerSec, sigma, kappa]) - 1) ** 2);
  const rms = (values: readonly number[]) => Math.sqrt(values.reduce((sum, value) => sum + value, 0) / values.length);
  return {
    ...fit,
    peakConcurrency,
    // Without coherency it levels off at λ ÷ σ (unbounded without contention too).
    peakThroughputPerSec: Number.isFinite(peakConcurrency)
      ? uslThroughputPerSec(fit, peakConcurrency)
      : sigma === 0
        ? Infinity
        : lambdaPerSec / sigma,
    latencyError: rms(residuals.slice(0, steps.length)),
    throughputError: rms(residuals.slice(steps.length)),
    meanSquare: residuals.reduce((sum, value) => sum + value, 0) / residuals.length,
  };
}

/** The best step and the highest one, whose throughput is below the best's. */
export interface PeakFall {
  readonly best: StepMeasure;
  readonly last: StepMeasure;
}

/**
 * Whether the measured throughput falls past a peak: the highest step's is below the best by
 * more than `noise` (a share), at a higher concurrency. A queue only levels off; a service whose
 * throughput falls is the USL's, with κ above 0.
 */
export function fallsPastPeak(steps: readonly StepMeasure[], noise: number): PeakFall | undefined {
  const sorted = [...steps].sort((a, b) => a.concurrency - b.concurrency);
  const best = sorted.reduce((top, step) => (step.throughputPerSec > top.throughputPerSec ? step : top));
  const last = sorted.at(-1)!;
  return last.concurrency > best.concurrency && last.throughputPerSec < best.throughputPerSec * (1 - noise) ? { best, last } : undefined;
}

/** Steps within this share of the best step's throughput make the measured top. */
const TOP_SHARE = 0.1;

/** Where the measured throughput peaks (measuredPeak), and how that was read from the steps. */
export interface MeasuredPeak {
  readonly concurrency: number;
  /** The vertex of the top's parabola; the middle of a top level within the noise; the best step, alone in its top. */
  readonly how: "vertex" | "middle" | "best";
  /** The best step's concurrency. */
  readonly best: number;
  /** The concurrencies of the steps within TOP_SHARE of the best. */
  readonly top: readonly number[];
}

/**
 * Where the measured throughput peaks. A smooth peak is flat at its top (the USL's throughput a
 * fifth of the peak's concurrency either side is within 2 % of its peak), so the step the noise
 * makes best can lie a whole step or two off (docs/probe.md). The top is every step within 10 %
 * of the best. Its peak is the vertex of a parabola fitted by least squares through its steps
 * (three at least), as any smooth maximum is a parabola near its top, where the parabola curves
 * down with its vertex among them; else the top is level within the noise, and its peak is its
 * middle. Either weighs every step of the top, and owes nothing to the USL.
 */
export function measuredPeak(steps: readonly StepMeasure[]): MeasuredPeak {
  const best = steps.reduce((top, step) => (step.throughputPerSec > top.throughputPerSec ? step : top));
  const topSteps = steps.filter((step) => step.throughputPerSec >= (1 - TOP_SHARE) * best.throughputPerSec);
  const top = topSteps.map((step) => step.concurrency).sort((a, b) => a - b);
  const [low, high] = [top[0]!, top.at(-1)!];
  const shared = { best: best.concurrency, top };
  if (top.length === 1) return { concurrency: best.concurrency, how: "best", ...shared };
  const parabola =
    top.length >= 3 ? leastSquaresParabola(topSteps.map((step) => [step.concurrency, step.throughputPerSec] as const)) : undefined;
  const vertex = parabola !== undefined && parabola.a < 0 ? -parabola.b / (2 * parabola.a) : undefined;
  if (vertex !== undefined && vertex >= low && vertex <= high) return { concurrency: vertex, how: "vertex", ...shared };
  return { concurrency: (low + high) / 2, how: "middle", ...shared };
}

/** y = a x² + b x + c by least squares: the normal equations, on x centred for their conditioning. */
function leastSquaresParabola(points: readonly (readonly [number, number])[]): { a: number; b: number } | undefined {
  const mean = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const sums = (power: number, withY: boolean) => points.reduce((sum, [x, y]) => sum + (x - mean) ** power * (withY ? y : 1), 0);
  const [s0, s1, s2, s3, s4] = [0, 1, 2, 3, 4].map((power) => sums(power, false)) as [number, number, number, number, number];
  const [t0, t1, t2] = [0, 1, 2].map((power) => sums(power, true)) as [number, number, number];
  // | s4 s3 s2 | |a|   |t2|
  // | s3 s2 s1 | |b| = |t1|   (Cramer's rule)
  // | s2 s1 s0 | |c|   |t0|
  const det3 = (m: readonly number[]) =>
    m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) - m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) + m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!);
  const determinant = det3([s4, s3, s2, s3, s2, s1, s2, s1, s0]);
  if (Math.abs(determinant) < 1e-12) return undefined;
  const a = det3([t2, s3, s2, t1, s2, s1, t0, s1, s0]) / determinant;
  const centredB = det3([s4, t2, s2, s3, t1, s1, s2, t0, s0]) / determinant;
  // Back from x − mean: a (x − m)² + b' (x − m) + c' has b = b' − 2 a m.
  return { a, b: centredB - 2 * a * mean };
}

const percent = (fraction: number) => `${(100 * fraction).toFixed(1)} %`;
const figure = (value: number) => (Number.isFinite(value) ? String(Number(value.toPrecision(3))) : "none");

/**
 * The probe's USL lines: the fit, its peak beside the queue model's threads, and which
 * describes the service better, and why. `picked` is the server model the probe picked, with
 * its root mean square error over latency and throughput; `noise` the share below which two
 * fits or two throughputs are level (the picker's floor between families).
 */
export function uslLines(
  steps: readonly StepMeasure[],
  usl: UslFit,
  queueThreads: number,
  picked: { readonly kind: string; readonly error: number; readonly isUsl: boolean },
  noise: number,
): string[] {
  const fit =
    `USL (Gunther): λ ${figure(usl.lambdaPerSec)} req/s per user, σ ${figure(usl.sigma)}, κ ${figure(usl.kappa)}; ` +
    `peak at ${figure(usl.peakConcurrency)} users (${figure(usl.peakThroughputPerSec)} req/s), beside the queue model's ${queueThreads} threads; ` +
    `latency error ${percent(usl.latencyError)}, throughput error ${percent(usl.throughputError)}`;
  const falls = fallsPastPeak(steps, noise);
  if (picked.isUsl && falls !== undefined) return [fit, uslPickedLine(usl, steps, falls, noise)];
  const uslError = Math.sqrt(usl.meanSquare);
  const errors = `error ${percent(uslError)} against ${percent(picked.error)}`;
  const why =
    falls !== undefined
      ? `the throughput falls past its peak (${figure(falls.best.throughputPerSec)} req/s at ${falls.best.concurrency} users, ` +
        `${figure(falls.last.throughputPerSec)} at ${falls.last.concurrency}), as the USL's does with κ above 0 and no queue's, which only levels off`
      : "the throughput levels off or still grows, without falling past a peak";
  const better =
    falls !== undefined
      ? `the ${picked.kind} fits it better by more than the picker's ${percent(noise)} floor`
      : uslError < picked.error * (1 - noise)
        ? "the USL describes it better"
        : `the picked ${picked.kind} describes it as well or better`;
  return [
    fit,
    `USL or ${picked.kind}: ${better} (${errors}); ${why}. The scenario keeps the ${picked.kind}; ./sim, ./server and a scenario ` +
      `take the USL as ${uslFlags(usl)}`,
  ];
}

/** Why the USL was picked, its peak beside the measured one, and what the scenario holds: one line. */
function uslPickedLine(usl: UslFit, steps: readonly StepMeasure[], falls: PeakFall, noise: number): string {
  const below = 1 - falls.last.throughputPerSec / falls.best.throughputPerSec;
  const peak = measuredPeak(steps);
  const off = usl.peakConcurrency / peak.concurrency - 1;
  const within = `the steps within ${percent(TOP_SHARE)} of the best, ${peak.top.join(", ")} users`;
  const how = {
    vertex: `the vertex of a parabola through ${within}; the best step ${peak.best}`,
    middle: `the middle of ${within}, level within the noise; the best step ${peak.best}`,
    best: `the best step, alone within ${percent(TOP_SHARE)} of its throughput`,
  }[peak.how];
  return (
    `USL picked: the throughput falls past its peak (${figure(falls.best.throughputPerSec)} req/s at ${falls.best.concurrency} users, ` +
    `${figure(falls.last.throughputPerSec)} at ${falls.last.concurrency}, ${percent(below)} below: more than the picker's ${percent(noise)} floor), ` +
    `which no queue and no linear model shows, their throughput only levelling off; ` +
    `peak at ${figure(usl.peakConcurrency)} users fitted, ${figure(peak.concurrency)} measured (${how}) (${off >= 0 ? "+" : ""}${percent(off)}); ` +
    `the scenario takes it as ${uslFlags(usl)}`
  );
}

/** The fit as the usl server model (src/model/servers/kinds/usl.ts): one request alone takes 1 ÷ λ. */
export function uslSpec(fit: Pick<UslFit, "lambdaPerSec" | "sigma" | "kappa">): UslSpec {
  return { kind: "usl", latency: { kind: "usl", baseDelayMs: 1000 / fit.lambdaPerSec, sigma: fit.sigma, kappa: fit.kappa } };
}

/** The fit as the usl server model's flags, rounded as a fit is stated. */
export function uslFlags(fit: Pick<UslFit, "lambdaPerSec" | "sigma" | "kappa">): string {
  const spec = usl.rounded(uslSpec(fit));
  return Object.entries(usl.settings(spec))
    .map(([name, value]) => `-${name} ${value}`)
    .join(" ");
}

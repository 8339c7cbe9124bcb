import type { ServerModelKind } from "../../model/servers/models.ts";
import { closedLoopLatencyMs, closedLoopThroughputPerSec } from "./closed-loop-curve.ts";
import { fitExponential, fitLinear, fitQueue, MIN_STEPS_TO_FIT, type ModelFit, roundedSpec } from "./fit-models.ts";
import { serviceSpread } from "./service-spread.ts";
import type { StepMeasure } from "./step-measure.ts";

/**
 * Out-of-sample errors: a fit's own errors (fit-models.ts) only say how well it follows the
 * steps it was fitted to, which a curve with a point per parameter, or one that joins the
 * points, does perfectly. Here each step between the lowest and the highest concurrency is left
 * out in turn, the family is fitted to the others, and the step is predicted. The two ends are
 * never left out: below the lowest step nothing is measured, and past the highest the fit would
 * have to guess a capacity that no remaining step shows (a probe stops one step after its knee).
 */

/** A fitted curve's mean latency (ms) and throughput (req/s) at a concurrency. */
export type Prediction = (concurrency: number) => { readonly meanLatencyMs: number; readonly throughputPerSec: number };

/** Fits a family to some steps and returns its curve. */
export type FamilyFitter = (steps: readonly StepMeasure[]) => Prediction;

export interface HeldOutError {
  /** Root mean square of (predicted − measured) ÷ measured, latency and throughput of every held-out step together. */
  readonly error: number;
  /** The held-out step predicted worst, and its larger relative error of the two. */
  readonly worst: { readonly concurrency: number; readonly off: number };
  /** How many steps were held out. */
  readonly heldOut: number;
}

/** Steps a held-out check needs: one to leave out between two ends, and the fit's minimum left. */
export const MIN_STEPS_TO_HOLD_OUT = MIN_STEPS_TO_FIT + 1;

/** A fitted model's closed-loop curve, with its parameters as printed (three significant digits). */
export function curveOf(fit: ModelFit): Prediction {
  const spec = roundedSpec(fit.spec);
  return (concurrency) => ({
    meanLatencyMs: closedLoopLatencyMs(spec, concurrency, fit.overheadMs),
    throughputPerSec: closedLoopThroughputPerSec(spec, concurrency, fit.overheadMs),
  });
}

/** The server models held out here: the USL is fitted apart (usl.ts), and picked only where the throughput falls (fit-models.ts). */
export type FittedFamily = Exclude<ServerModelKind, "usl">;

/** The probe's three families, as fitModels fits each. */
export const FAMILY_FITTERS: Readonly<Record<FittedFamily, FamilyFitter>> = {
  queue: (steps) => curveOf(fitQueue(steps, serviceSpread(steps))),
  linear: (steps) => curveOf(fitLinear(steps)),
  exponential: (steps) => curveOf(fitExponential(steps)),
};

/** Leaves out each inner step in turn, fits `fitter` to the rest and predicts it; undefined under MIN_STEPS_TO_HOLD_OUT steps. */
export function heldOutError(steps: readonly StepMeasure[], fitter: FamilyFitter): HeldOutError | undefined {
  if (steps.length < MIN_STEPS_TO_HOLD_OUT) return undefined;
  const sorted = [...steps].sort((a, b) => a.concurrency - b.concurrency);
  const squares: number[] = [];
  let worst = { concurrency: 0, off: -1 };
  for (let index = 1; index < sorted.length - 1; index++) {
    const step = sorted[index]!;
    const predicted = fitter(sorted.filter((_, other) => other !== index))(step.concurrency);
    const offs = [predicted.meanLatencyMs / step.meanLatencyMs - 1, predicted.throughputPerSec / step.throughputPerSec - 1];
    squares.push(...offs.map((off) => off ** 2));
    const off = Math.max(...offs.map(Math.abs));
    if (!(off <= worst.off)) worst = { concurrency: step.concurrency, off };
  }
  const error = Math.sqrt(squares.reduce((sum, square) => sum + square, 0) / squares.length);
  return { error, worst, heldOut: sorted.length - 2 };
}

/** Each family's held-out error, in the order queue, linear, exponential; undefined under MIN_STEPS_TO_HOLD_OUT steps. */
export function heldOutErrors(steps: readonly StepMeasure[]): ReadonlyMap<ServerModelKind, HeldOutError> | undefined {
  if (steps.length < MIN_STEPS_TO_HOLD_OUT) return undefined;
  const kinds = Object.keys(FAMILY_FITTERS) as FittedFamily[];
  return new Map(kinds.map((kind) => [kind, heldOutError(steps, FAMILY_FITTERS[kind])!]));
}

const percent = (fraction: number) => `${(100 * fraction).toFixed(1)} %`;

type HeldOutErrors = ReadonlyMap<ServerModelKind, HeldOutError>;

/** The probe's line: each family's held-out error (heldOutErrors), and the step it predicted worst. */
export function heldOutLine(errors: HeldOutErrors | undefined): string {
  if (errors === undefined)
    return `held out: nothing (a step between two others and ${MIN_STEPS_TO_FIT} left to fit: ${MIN_STEPS_TO_HOLD_OUT} steps or more)`;
  const heldOut = errors.values().next().value!.heldOut;
  const families = [...errors].map(
    ([kind, { error, worst }]) => `${kind} ${percent(error)} (worst at concurrency ${worst.concurrency}, ${percent(worst.off)})`,
  );
  return `held out (each of the ${heldOut} steps between the lowest and the highest, predicted by a fit to the others): ${families.join(", ")}`;
}

/**
 * A line when another family predicts the held-out steps better than the picked one, which the
 * picker's 5 % floor between families can take (an exponential ./server's steps, for one:
 * docs/probe.md, "Out of sample"); undefined when the picked one predicts them best.
 */
export function betterHeldOutLine(errors: HeldOutErrors | undefined, picked: ServerModelKind): string | undefined {
  if (errors === undefined) return undefined;
  const [bestKind, best] = [...errors].reduce((lowest, entry) => (entry[1].error < lowest[1].error ? entry : lowest));
  // The USL, picked where the throughput falls (fit-models.ts), is not held out: nothing to set beside it.
  const pickedError = errors.get(picked)?.error;
  if (pickedError === undefined || bestKind === picked || !(best.error < pickedError)) return undefined;
  return `held out, ${bestKind} predicts the steps left out better than the picked ${picked} (${percent(best.error)} against ${percent(pickedError)})`;
}

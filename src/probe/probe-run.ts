import { formatDuration } from "../cli/duration.ts";
import { FatalError } from "../cli/usage-error.ts";
import type { OutputStream } from "../runtime/program-io.ts";
import { FAMILY_NOISE_FLOOR } from "./fit/fit-models.ts";
import type { StepMeasure } from "./fit/step-measure.ts";
import { fallsPastPeak } from "./fit/usl.ts";
import { redactUrl } from "../cli/redact-url.ts";
import { ProbeBudget } from "./budget.ts";
import { REAL_TIMING, runStep, type StepRecord, type StepTiming } from "./load-step.ts";
import { saturation, type SaturationRule, type StopReason } from "./saturation.ts";
import { summarizeStep } from "./step-summary.ts";

export interface ProbeLimits {
  readonly stepDurationMs: number;
  readonly stepRequests: number;
  readonly maxRequests: number;
  readonly maxRatePerSec: number;
  readonly maxTimeMs: number;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
}

/** Why the steps ended: the service saturated, or a limit of the probe's own came first. */
export type ProbeEnd =
  { readonly kind: "saturated"; readonly reason: StopReason } | { readonly kind: "steps" | "requests" | "time" | "rate" | "interrupted" };

export interface ProbeRun {
  readonly steps: readonly StepMeasure[];
  readonly end: ProbeEnd;
  readonly sent: number;
}

/**
 * How far past the first step that levels the probe goes: to this many times its concurrency,
 * unless the throughput falls first by more than the picker's floor (a peak passed: the USL's). A
 * smooth peak is flat at its top: its fall shows only at one and a half to two times its
 * concurrency; a queue stays level there. Further, a queue's own overhead shows (gunicorn's 4
 * workers: 7 % less at 32 users than at 8), which is not the service's peak (docs/probe.md).
 */
const PAST_LEVEL_FACTOR = 2;

/** Whether the steps past the level decide it: a fall past the floor, or a step at PAST_LEVEL_FACTOR times the level's users. */
function levelDecided(steps: readonly StepMeasure[], levelConcurrency: number): boolean {
  return steps.at(-1)!.concurrency >= PAST_LEVEL_FACTOR * levelConcurrency || fallsPastPeak(steps, FAMILY_NOISE_FLOOR) !== undefined;
}

/** Steps longer than this many -step-duration end anyway (a slow service never reaches -step-requests). */
const MAX_STEP_DURATIONS = 4;

/**
 * Runs the steps in order, printing each as it ends, until the service saturates (when
 * `rule` is given: its throughput levels, then the steps past the level until levelDecided, and
 * around a peak where it falls; its p99 or errors pass their bounds, at once), a limit is reached,
 * the list ends or `interrupt` fires. A first step
 * with no successful answer is a service that cannot be probed: one line, and no more load.
 */
export async function probeSteps(
  url: URL,
  concurrencies: readonly number[],
  limits: ProbeLimits,
  rule: SaturationRule | undefined,
  interrupt: AbortSignal,
  stdout: OutputStream,
  timing: StepTiming = REAL_TIMING,
): Promise<ProbeRun> {
  const budget = new ProbeBudget(limits.maxRequests, limits.maxRatePerSec, limits.maxTimeMs, interrupt);
  try {
    return await runSteps(url, concurrencies, limits, rule, budget, interrupt, stdout, timing);
  } finally {
    budget.dispose();
  }
}

async function runSteps(
  url: URL,
  concurrencies: readonly number[],
  limits: ProbeLimits,
  rule: SaturationRule | undefined,
  budget: ProbeBudget,
  interrupt: AbortSignal,
  stdout: OutputStream,
  timing: StepTiming,
): Promise<ProbeRun> {
  const steps: StepMeasure[] = [];
  // Refining steps come after the steps they lie between: the run keeps them in order of concurrency.
  const finish = (end: ProbeEnd): ProbeRun => ({
    steps: [...steps].sort((a, b) => a.concurrency - b.concurrency),
    end,
    sent: budget.sent,
  });
  /** One step, printed and kept unless a limit or an interrupt cut it (too short to stand beside the others). */
  const stepAt = async (concurrency: number) => {
    budget.rateBound = false;
    const record = await runStep(
      url,
      {
        concurrency,
        durationMs: limits.stepDurationMs,
        minRequests: limits.stepRequests,
        maxDurationMs: MAX_STEP_DURATIONS * limits.stepDurationMs,
        timeoutMs: limits.timeoutMs,
        maxBodyBytes: limits.maxBodyBytes,
      },
      budget,
      interrupt,
      timing,
    );
    if (steps.length === 0 && !record.interrupted && budget.exhausted === undefined) refuseUnprobeable(url, record, limits);
    const measure = summarizeStep(record);
    if (measure !== undefined && !record.interrupted && budget.exhausted === undefined) {
      steps.push(measure);
      stdout.write(`${formatStep(measure)}\n`);
    }
    return { record, measure };
  };
  // Saturated by throughput at a step before: the steps past it tell a level (a queue) from a
  // fall past a peak (the USL's), and a slow step from saturation (docs/probe.md).
  let levelled: StopReason | undefined;
  let levelConcurrency = 0;
  for (const concurrency of concurrencies) {
    const { record, measure } = await stepAt(concurrency);
    if (record.interrupted) return finish({ kind: "interrupted" });
    // A limit that cuts the step past saturation leaves the saturation found: that step is only a look further.
    if (budget.exhausted !== undefined)
      return finish(levelled === undefined ? { kind: budget.exhausted } : { kind: "saturated", reason: levelled });
    // The rate limit reached past the level leaves the saturation found, as the other limits do.
    if (measure !== undefined && budget.rateBound && measure.throughputPerSec >= 0.9 * budget.ceilingPerSec)
      return finish(levelled === undefined ? { kind: "rate" } : { kind: "saturated", reason: levelled });
    // No measuring window (every answer failed, or none came): past saturation by any account.
    if (measure === undefined && rule !== undefined) {
      return finish({
        kind: "saturated",
        reason: { kind: "errors", share: record.allAnswers === 0 ? 1 : 1 - record.allSucceeded / record.allAnswers },
      });
    }
    const reason = rule === undefined ? undefined : saturation(steps, rule);
    if (reason !== undefined && reason.kind !== "throughput") return finish({ kind: "saturated", reason: levelled ?? reason });
    // A step past the level that grew by more than -min-growth after all: the level was a slow step.
    if (reason === undefined || levelled === undefined) [levelled, levelConcurrency] = [reason, concurrency];
    else if (levelDecided(steps, levelConcurrency)) break;
  }
  if (levelled === undefined) return finish({ kind: "steps" });
  const saturated: ProbeEnd = { kind: "saturated", reason: levelled };
  return finish((await stepsPastSaturation(steps, stepAt, budget, saturated, stdout)) ?? saturated);
}

/**
 * The steps a saturated probe takes last: each dip measured again, the steps around a falling
 * peak, and the dips among those; the end where an interrupt or a limit cut one (a limit leaves
 * the saturation found).
 */
async function stepsPastSaturation(
  steps: StepMeasure[],
  stepAt: (concurrency: number) => Promise<{ record: StepRecord }>,
  budget: ProbeBudget,
  saturated: ProbeEnd,
  stdout: OutputStream,
): Promise<ProbeEnd | undefined> {
  const extra = async (concurrency: number): Promise<ProbeEnd | undefined> => {
    const { record } = await stepAt(concurrency);
    if (record.interrupted) return { kind: "interrupted" };
    return budget.exhausted === undefined ? undefined : saturated;
  };
  const again = async (concurrency: number) => {
    stdout.write(
      `measured again at ${concurrency} users: the step was more than ${DIP_SHARE * 100} % below both its neighbours, a hiccup\n`,
    );
    return extra(concurrency);
  };
  const remeasured = new Set<number>();
  return (
    (await remeasureDips(steps, again, remeasured)) ?? (await findPeak(steps, extra)) ?? (await remeasureDips(steps, again, remeasured))
  );
}

/** An extra step at a concurrency; the probe's end where an interrupt or a limit cut it. */
type ExtraStep = (concurrency: number) => Promise<ProbeEnd | undefined>;

/**
 * Where the throughput falls past a peak, the steps between the best and its neighbours find the
 * peak (MAX_PEAK_ROUNDS rounds).
 */
async function findPeak(steps: readonly StepMeasure[], extra: ExtraStep): Promise<ProbeEnd | undefined> {
  for (let round = 0; round < MAX_PEAK_ROUNDS; round++) {
    const fall = fallsPastPeak(steps, FAMILY_NOISE_FLOOR);
    for (const concurrency of fall === undefined ? [] : stepsAroundPeak(steps, fall.best.concurrency)) {
      const end = await extra(concurrency);
      if (end !== undefined) return end;
    }
  }
  return undefined;
}

/**
 * A step whose throughput is more than this share below both its neighbours': no model's curve
 * dips so between two concurrencies, a hiccup of the machine's does (seen: 89.5 req/s at 13 users
 * between 181.7 at 12 and 175.5 at 14 on the retrograde service, which pulled the USL's peak 20 %
 * low). Twice the picker's floor.
 */
const DIP_SHARE = 2 * FAMILY_NOISE_FLOOR;

/** The concurrencies of the steps more than DIP_SHARE below both neighbours. */
export function dips(steps: readonly StepMeasure[]): number[] {
  const sorted = [...steps].sort((a, b) => a.concurrency - b.concurrency);
  return sorted
    .slice(1, -1)
    .filter(
      (step, index) =>
        step.throughputPerSec < (1 - DIP_SHARE) * Math.min(sorted[index]!.throughputPerSec, sorted[index + 2]!.throughputPerSec),
    )
    .map((step) => step.concurrency);
}

/**
 * Each dip measured again, once (`remeasured` holds those done), the new step in the old one's
 * place; a dip cut short by a limit or an interrupt keeps the old step.
 */
async function remeasureDips(steps: StepMeasure[], extra: ExtraStep, remeasured: Set<number>): Promise<ProbeEnd | undefined> {
  for (const concurrency of dips(steps).filter((dip) => !remeasured.has(dip))) {
    remeasured.add(concurrency);
    const index = steps.findIndex((step) => step.concurrency === concurrency);
    const [old] = steps.splice(index, 1);
    const end = await extra(concurrency);
    // No new step (cut short, or no answer at all): the old one stands, as printed.
    if (!steps.some((step) => step.concurrency === concurrency)) steps.push(old!);
    if (end !== undefined) return end;
  }
  return undefined;
}

/**
 * Rounds of steps around a peak: each halves the gap between the best step and its neighbours,
 * so two take steps of 6, 8, 12, 16 users to one user either side of a peak between 8 and 16.
 */
const MAX_PEAK_ROUNDS = 2;

/**
 * The concurrencies halfway between the best step and the steps either side of it (none below
 * it: halfway to 0), those not measured yet: where a retrograde service's peak lies, which the
 * list's coarse steps leave a whole step apart (docs/probe.md).
 */
export function stepsAroundPeak(steps: readonly StepMeasure[], best: number): number[] {
  const measured = new Set(steps.map((step) => step.concurrency));
  const below = Math.max(0, ...[...measured].filter((concurrency) => concurrency < best));
  const above = Math.min(...[...measured].filter((concurrency) => concurrency > best));
  const halfway = [Math.round((below + best) / 2), Math.round((best + above) / 2)];
  return [...new Set(halfway)].filter((concurrency) => concurrency >= 1 && Number.isFinite(concurrency) && !measured.has(concurrency));
}

/** A latency as the probe prints it; n/a for a percentile a load-test file did not give (probe -from). */
const ms = (value: number) => (Number.isNaN(value) ? "n/a" : `${value.toFixed(1)} ms`);

/** One step as the probe prints it. */
export function formatStep(step: StepMeasure): string {
  const share = step.requests === 0 ? 0 : (100 * step.errors) / step.requests;
  return (
    `concurrency ${String(step.concurrency).padStart(4)}: ${step.throughputPerSec.toFixed(1).padStart(8)} req/s, ` +
    `p50 ${ms(step.p50Ms)}, p90 ${ms(step.p90Ms)}, p99 ${ms(step.p99Ms)}, errors ${step.errors} (${share.toFixed(1)} %)`
  );
}

/** Why the first step shows a service that cannot be probed (not one answer succeeded), as one line; nothing when one did. */
function refuseUnprobeable(url: URL, record: StepRecord, limits: ProbeLimits): void {
  if (record.allSucceeded > 0) return;
  const [kind] = [...record.errorKinds.entries()].sort((a, b) => b[1] - a[1])[0] ?? ["timeout"];
  const shown = redactUrl(url);
  if (kind === "refused") throw new FatalError(`cannot connect to ${shown}: connection refused (is the service running?)`);
  if (kind === "timeout") {
    throw new FatalError(`${shown} answered no request in full within the -timeout of ${formatDuration(limits.timeoutMs)}`);
  }
  if (kind.startsWith("HTTP ")) throw new FatalError(`every answer from ${shown} was an error (${kind}): nothing to measure`);
  if (kind === "body-too-large") {
    throw new FatalError(
      `every answer from ${shown} had a body longer than -max-body (${limits.maxBodyBytes} bytes): nothing to measure (raise -max-body if its answers are that long)`,
    );
  }
  throw new FatalError(`${shown} did not answer as an HTTP service (${kind})`);
}

/** The end of a probe in words. */
export function describeEnd(end: ProbeEnd, limits: ProbeLimits): string {
  switch (end.kind) {
    case "saturated": {
      const reason = end.reason;
      if (reason.kind === "throughput") return `saturated: throughput grew ${(100 * reason.growth).toFixed(1)} % over the best step before`;
      if (reason.kind === "p99") return `saturated: p99 ${ms(reason.p99Ms)} passed -max-p99`;
      return `saturated: errors ${(100 * reason.share).toFixed(1)} % of answers passed -max-errors`;
    }
    case "steps":
      return "the steps ran out before the service saturated";
    case "requests":
      return `the -max-requests limit of ${limits.maxRequests} was reached before the service saturated`;
    case "time":
      return `the -max-time limit of ${formatDuration(limits.maxTimeMs)} was reached before the service saturated`;
    case "rate":
      return `the -max-rate limit of ${limits.maxRatePerSec} req/s held the throughput back: the probe's limit, not the service's`;
    case "interrupted":
      return "interrupted";
  }
}

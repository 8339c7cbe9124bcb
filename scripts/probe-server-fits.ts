/**
 * The probe's fits against the real ./server's curves (docs/probe.md, "Out of sample"): each
 * server model of test/helpers/server-steps.ts, in this process on a loopback port, probed at
 * its steps and fitted, first on a virtual clock with each step length below, then 3 times on
 * the real clock with the probe's default steps. Records, per run, the steps, the configured family's parameters beside the
 * server's, each family's own (in-sample) and held-out errors, and those of a "fit" that only
 * joins the points; then, for each clock, the largest and smallest of each over the runs (the
 * virtual clock's are the spread that test/unit/probe/server-curves.test.ts takes its bounds
 * from; the real clock's, how much a shared machine moves the steps from run to run), with the
 * load average. Writes docs/probe-server-fits.json. About 3 minutes.
 *
 *   node --import ./src/register-tsx.mjs scripts/probe-server-fits.ts
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { ServerModelKind } from "../src/model/servers/models.ts";
import { fitModels } from "../src/probe/fit/fit-models.ts";
import type { ServiceSpread } from "../src/probe/fit/service-spread.ts";
import { FAMILY_FITTERS, type FittedFamily, heldOutError } from "../src/probe/fit/held-out.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { describeModelSpec } from "../src/model/servers/model-flags.ts";
import {
  configuredSpec,
  joinThePoints,
  parameterOffsets,
  SERVER_CURVE_CASES,
  type ServerCurveCase,
  serverSteps,
  serverStepsInRealTime,
  SHORT_STEP_LIMITS,
} from "../test/helpers/server-steps.ts";

const FILE = "docs/probe-server-fits.json";
/**
 * On a virtual clock a run is the same whenever it runs; what moves its figures is where a
 * step's measuring window starts and ends in the server's cycle, which the step's length sets.
 */
const STEP_DURATIONS_MS = [250, 300, 350, 400, 450, 500, 600, 700];
const KINDS = Object.keys(FAMILY_FITTERS) as FittedFamily[];
/**
 * The real clock's runs, with the probe's default steps (2 s and 200 answers at least) and
 * all alike: what moves them is the machine (late timers, a busy event loop shared by the probe
 * and the server, other jobs on the cores).
 */
const REAL_REPEATS = 3;
const DEFAULT_STEP: StepLength = { stepDurationMs: 2_000, stepRequests: 200 };
const round = (value: number) => Number(value.toPrecision(4));

/** A step's least length and answers (the probe's -step-duration and -step-requests). */
interface StepLength {
  readonly stepDurationMs: number;
  readonly stepRequests: number;
}

/** One probe of one server model, fitted. */
interface FitRun {
  readonly kind: ServerModelKind;
  readonly clock: "virtual" | "real";
  readonly stepDurationMs: number;
  readonly stepRequests: number;
  /** The service-time spread read from the lowest step (a constant service's is the machine's). */
  readonly lowestStepSpread: ServiceSpread;
  readonly steps: readonly { concurrency: number; throughputPerSec: number; meanLatencyMs: number }[];
  readonly picked: ServerModelKind;
  /** The server's own family, fitted, and its parameters' offsets from the server's (parameterOffsets). */
  readonly fitted: string;
  readonly offsets: Readonly<Record<string, number>>;
  /** Root mean square of each family's relative errors on the steps it was fitted to. */
  readonly inSample: Readonly<Record<string, number>>;
  /** Each family's held-out error, and that of a "fit" that only joins the points. */
  readonly heldOut: Readonly<Record<string, number>>;
}

async function fitRun(serverCase: ServerCurveCase, step: StepLength, clock: FitRun["clock"]): Promise<FitRun> {
  const measure = clock === "virtual" ? serverSteps : serverStepsInRealTime;
  const steps = await measure(serverCase, { ...SHORT_STEP_LIMITS, ...step });
  const fit = fitModels(steps);
  const own = fit.fits.find((candidate) => candidate.spec.kind === serverCase.kind)!;
  const roundAll = (entries: [string, number][]) => Object.fromEntries(entries.map(([name, value]) => [name, round(value)]));
  return {
    kind: serverCase.kind,
    clock,
    ...step,
    lowestStepSpread: fit.spread,
    steps: steps.map(({ concurrency, throughputPerSec, meanLatencyMs }) => ({
      concurrency,
      throughputPerSec: round(throughputPerSec),
      meanLatencyMs: round(meanLatencyMs),
    })),
    picked: fit.chosen.spec.kind,
    fitted: describeModelSpec(own.spec),
    offsets: roundAll(Object.entries(parameterOffsets(configuredSpec(serverCase), own.spec))),
    inSample: roundAll(fit.fits.map((family) => [family.spec.kind, Math.sqrt(family.meanSquare)])),
    heldOut: roundAll([
      ...KINDS.map((kind): [string, number] => [kind, heldOutError(steps, FAMILY_FITTERS[kind])!.error]),
      ["joinThePoints", heldOutError(steps, joinThePoints)!.error],
    ]),
  };
}

async function recordRuns(clock: FitRun["clock"], steps: readonly StepLength[]): Promise<FitRun[]> {
  const runs: FitRun[] = [];
  for (const serverCase of SERVER_CURVE_CASES) {
    for (const step of steps) {
      const run = await fitRun(serverCase, step, clock);
      runs.push(run);
      process.stderr.write(
        `${clock} ${run.kind} ${step.stepDurationMs} ms: picked ${run.picked}, ${run.fitted}, held out ${JSON.stringify(run.heldOut)}\n`,
      );
    }
  }
  return runs;
}

/**
 * Over one server model's runs: each parameter's largest offset, its own family's largest
 * in-sample and held-out errors, the smallest held-out error of the others, and how far each
 * step's mean latency moved between runs ((largest ÷ smallest − 1), the most over the steps).
 */
function spreadOf(runs: readonly FitRun[]) {
  return Object.fromEntries(
    SERVER_CURVE_CASES.map(({ kind }) => {
      const own = runs.filter((run) => run.kind === kind);
      const names = Object.keys(own[0]!.offsets);
      const others = [...KINDS.filter((other) => other !== kind), "joinThePoints"];
      const largest = (values: readonly number[]) => round(Math.max(...values));
      const stepMoves = own[0]!.steps.map(({ concurrency }) => {
        const latencies = own.map((run) => run.steps.find((step) => step.concurrency === concurrency)?.meanLatencyMs ?? Number.NaN);
        return Math.max(...latencies) / Math.min(...latencies) - 1;
      });
      return [
        kind,
        {
          largestOffset: Object.fromEntries(
            names.map((name) => [name, largest(own.map((run) => Math.abs(run.offsets[name] ?? Number.NaN)))]),
          ),
          picked: [...new Set(own.map((run) => run.picked))],
          largestOwnInSample: largest(own.map((run) => run.inSample[kind]!)),
          largestOwnHeldOut: largest(own.map((run) => run.heldOut[kind]!)),
          smallestOtherHeldOut: Object.fromEntries(
            others.map((other) => [other, round(Math.min(...own.map((run) => run.heldOut[other]!)))]),
          ),
          largestStepLatencyMove: largest(stepMoves),
        },
      ];
    }),
  );
}

const recordedAt = provenance();
// The machine may be shared: its 1-minute load average at the start and the end says how busy it was for the real-clock runs.
const virtualRuns = await recordRuns(
  "virtual",
  STEP_DURATIONS_MS.map((stepDurationMs) => ({ stepDurationMs, stepRequests: SHORT_STEP_LIMITS.stepRequests })),
);
const loadAtStart = loadavg()[0]!;
const realRuns = await recordRuns(
  "real",
  Array.from({ length: REAL_REPEATS }, () => DEFAULT_STEP),
);
const loadAtEnd = loadavg()[0]!;

const summary = {
  provenance: recordedAt,
  command: "node --import ./src/register-tsx.mjs scripts/probe-server-fits.ts",
  settings: {
    cases: SERVER_CURVE_CASES,
    virtualStepDurationsMs: STEP_DURATIONS_MS,
    virtualStepRequests: SHORT_STEP_LIMITS.stepRequests,
    realRepeats: REAL_REPEATS,
    realStep: DEFAULT_STEP,
  },
  virtual: { spread: spreadOf(virtualRuns), runs: virtualRuns },
  real: { loadAverage: { start: round(loadAtStart), end: round(loadAtEnd) }, spread: spreadOf(realRuns), runs: realRuns },
};
writeFileSync(FILE, `${JSON.stringify(summary, null, 2)}\n`);
process.stderr.write(`wrote ${FILE}\n`);

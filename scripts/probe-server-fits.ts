/**
 * The probe's fits against the real ./server's curves (docs/probe.md, "Out of sample"): each
 * server model of test/helpers/server-steps.ts, in this process on a loopback port, on a
 * virtual clock, probed at its steps with each step length below, and fitted. Records, per
 * run, the steps, the configured family's parameters beside the server's, each family's own
 * (in-sample) and held-out errors, and those of a "fit" that only joins the points; then the
 * largest and smallest of each over the runs, the spread that test/unit/probe/server-curves.test.ts
 * takes its bounds from. Writes docs/probe-server-fits.json. A few seconds.
 *
 *   node --import ./src/register-tsx.mjs scripts/probe-server-fits.ts
 */
import { writeFileSync } from "node:fs";
import type { ServerModelKind } from "../src/model/servers/models.ts";
import { fitModels } from "../src/probe/fit/fit-models.ts";
import { FAMILY_FITTERS, heldOutError } from "../src/probe/fit/held-out.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { describeModelSpec } from "../src/server/model-flags.ts";
import {
  configuredSpec,
  joinThePoints,
  parameterOffsets,
  SERVER_CURVE_CASES,
  type ServerCurveCase,
  serverSteps,
  SHORT_STEP_LIMITS,
} from "../test/helpers/server-steps.ts";

const FILE = "docs/probe-server-fits.json";
/**
 * On a virtual clock a run is the same whenever it runs; what moves its figures is where a
 * step's measuring window starts and ends in the server's cycle, which the step's length sets.
 */
const STEP_DURATIONS_MS = [250, 300, 350, 400, 450, 500, 600, 700];
const KINDS = Object.keys(FAMILY_FITTERS) as ServerModelKind[];
const round = (value: number) => Number(value.toPrecision(4));

/** One probe of one server model, fitted. */
interface FitRun {
  readonly kind: ServerModelKind;
  readonly stepDurationMs: number;
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

async function fitRun(serverCase: ServerCurveCase, stepDurationMs: number): Promise<FitRun> {
  const steps = await serverSteps(serverCase, { ...SHORT_STEP_LIMITS, stepDurationMs });
  const fit = fitModels(steps);
  const own = fit.fits.find((candidate) => candidate.spec.kind === serverCase.kind)!;
  const roundAll = (entries: [string, number][]) => Object.fromEntries(entries.map(([name, value]) => [name, round(value)]));
  return {
    kind: serverCase.kind,
    stepDurationMs,
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

const recordedAt = provenance();
const runs: FitRun[] = [];
for (const serverCase of SERVER_CURVE_CASES) {
  for (const stepDurationMs of STEP_DURATIONS_MS) {
    const run = await fitRun(serverCase, stepDurationMs);
    runs.push(run);
    process.stderr.write(
      `${run.kind} ${stepDurationMs} ms: picked ${run.picked}, ${run.fitted}, held out ${JSON.stringify(run.heldOut)}\n`,
    );
  }
}

/**
 * Over one server model's runs: each parameter's largest offset, its own family's largest
 * held-out error, and the smallest of the others'.
 */
const spread = Object.fromEntries(
  SERVER_CURVE_CASES.map(({ kind }) => {
    const own = runs.filter((run) => run.kind === kind);
    const names = Object.keys(own[0]!.offsets);
    const others = [...KINDS.filter((other) => other !== kind), "joinThePoints"];
    return [
      kind,
      {
        largestOffset: Object.fromEntries(names.map((name) => [name, Math.max(...own.map((run) => Math.abs(run.offsets[name]!)))])),
        picked: [...new Set(own.map((run) => run.picked))],
        largestOwnInSample: Math.max(...own.map((run) => run.inSample[kind]!)),
        largestOwnHeldOut: Math.max(...own.map((run) => run.heldOut[kind]!)),
        smallestOtherHeldOut: Object.fromEntries(others.map((other) => [other, Math.min(...own.map((run) => run.heldOut[other]!))])),
      },
    ];
  }),
);

const summary = {
  provenance: recordedAt,
  command: "node --import ./src/register-tsx.mjs scripts/probe-server-fits.ts",
  settings: {
    cases: SERVER_CURVE_CASES,
    stepDurationsMs: STEP_DURATIONS_MS,
    stepRequests: SHORT_STEP_LIMITS.stepRequests,
    clock: "virtual",
  },
  spread,
  runs,
};
writeFileSync(FILE, `${JSON.stringify(summary, null, 2)}\n`);
process.stderr.write(`wrote ${FILE}\n`);

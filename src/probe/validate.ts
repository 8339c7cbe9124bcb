import { ChildProgram } from "../runtime/child-program.ts";
import { FatalError } from "../cli/usage-error.ts";
import { defaultLauncher } from "../runtime/launcher.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { ModelFit } from "./fit/fit-models.ts";
import { closedLoopLatencyMs, closedLoopThroughputPerSec } from "./fit/closed-loop-curve.ts";
import type { StepMeasure } from "./fit/step-measure.ts";
import { modelArgs } from "./model-settings.ts";
import { type ProbeLimits, probeSteps } from "./probe-run.ts";

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)(\/api)/;

/** The steps -validate compares: the service's, with any measured again, and ./server's. */
export interface Validation {
  readonly measured: readonly StepMeasure[];
  readonly server: readonly StepMeasure[];
}

/**
 * -validate: starts ./server with the fitted model on a free loopback port (in its own
 * process group, stopped by its pid), probes it at the measured steps' concurrencies with
 * the same limits, and prints measured, ./server and model side by side. A step beyond the
 * tolerance is measured twice more on the service and on ./server, and judged by the median of
 * its three measures on each side (compare): a step the machine disturbed (a busy moment on either side,
 * which can last through a second measure) is not a disagreement, and one off in most of its
 * measures is. The service is measured again within `target.limits`, what is left of the
 * probe's own (-max-requests, -max-time), less what each measure again spent; with none left, it is not.
 */
export async function validateFit(
  fit: ModelFit,
  measured: readonly StepMeasure[],
  target: { readonly url: URL; readonly limits: ProbeLimits | undefined },
  limits: ProbeLimits,
  interrupt: AbortSignal,
  io: ProgramIo,
): Promise<Validation> {
  const launch = defaultLauncher()("server");
  const args = [...launch.args, "-listen", "127.0.0.1:0", ...modelArgs(fit.spec)];
  io.stderr.write(`probe: -validate: ./server ${args.slice(launch.args.length).join(" ")}\n`);
  const server = new ChildProgram("server", launch.command, args);
  const stopOnInterrupt = () => server.kill();
  interrupt.addEventListener("abort", stopOnInterrupt);
  try {
    const line = await server.waitForLine(LISTENING, { stream: "stderr", timeoutMs: 30_000 }).catch((error: unknown) => {
      throw new FatalError(`-validate: ./server did not start: ${(error as Error).message}`);
    });
    const serverUrl = new URL(`http://127.0.0.1:${LISTENING.exec(line)![1]!}/api`);
    const sink = { write: () => true };
    let serviceLimits = target.limits;
    const measure: Measure = async (side, concurrencies) => {
      if (side === "server") return (await probeSteps(serverUrl, concurrencies, limits, undefined, interrupt, sink)).steps;
      if (serviceLimits === undefined) return [];
      const started = performance.now();
      const run = await probeSteps(target.url, concurrencies, serviceLimits, undefined, interrupt, sink);
      serviceLimits = spentFrom(serviceLimits, run.sent, performance.now() - started);
      return run.steps;
    };
    return await compare(fit, measured, measure, { serviceAgain: target.limits !== undefined, interrupt }, io);
  } finally {
    interrupt.removeEventListener("abort", stopOnInterrupt);
    await server.stop();
  }
}

/** What is left of the service's limits after a measure sent `requests` in `elapsedMs`; undefined when nothing is. */
function spentFrom(limits: ProbeLimits, requests: number, elapsedMs: number): ProbeLimits | undefined {
  const left = { ...limits, maxRequests: limits.maxRequests - requests, maxTimeMs: limits.maxTimeMs - elapsedMs };
  return left.maxRequests > 0 && left.maxTimeMs > 0 ? left : undefined;
}

/** Measures one side at the concurrencies given: the service under test or ./server with the model. */
export type Measure = (side: "service" | "server", concurrencies: readonly number[]) => Promise<readonly StepMeasure[]>;

/** A step beyond the tolerance is judged by the median of this many measures on each side, the first among them. */
export const MEASURES_OF_A_STEP_OFF = 3;

/**
 * ./server measured at every measured step; each step beyond the tolerance measured
 * MEASURES_OF_A_STEP_OFF - 1 more times on both sides and judged by the median of its measures
 * (by its latest where a side has fewer: the service's limits spent, or an interrupt); prints the
 * table and the verdict.
 */
export async function compare(
  fit: ModelFit,
  measured: readonly StepMeasure[],
  measure: Measure,
  options: { readonly serviceAgain: boolean; readonly interrupt: AbortSignal },
  io: ProgramIo,
): Promise<Validation> {
  let validation: Validation = {
    measured,
    server: await measure(
      "server",
      measured.map((step) => step.concurrency),
    ),
  };
  const off = disagreements(fit, validation.measured, validation.server);
  if (off.length > 0 && !options.interrupt.aborted) {
    const what = off.map((row) => row.what).join("; ");
    if (!options.serviceAgain) {
      io.stderr.write(`probe: -validate: ${what}: not measured again, the probe's -max-requests or -max-time is spent\n`);
    } else {
      const again = off.map((row) => row.concurrency);
      io.stderr.write(
        `probe: -validate: ${what}: measuring ${again.length === 1 ? "that step" : "those steps"} ` +
          `${MEASURES_OF_A_STEP_OFF - 1} more times on the service and on ./server, and judging the median of each figure\n`,
      );
      const measures = { service: [validation.measured], server: [validation.server] };
      for (let round = 1; round < MEASURES_OF_A_STEP_OFF && !options.interrupt.aborted; round++) {
        measures.service.push(await measure("service", again));
        measures.server.push(await measure("server", again));
      }
      const short = again.filter((concurrency) => measuresAt(measures.service, concurrency) < MEASURES_OF_A_STEP_OFF);
      if (short.length > 0 && !options.interrupt.aborted) {
        io.stderr.write(
          `probe: -validate: the service at concurrency ${short.join(", ")} measured fewer than ${MEASURES_OF_A_STEP_OFF} times ` +
            `(the probe's -max-requests or -max-time spent): judged by its latest measure\n`,
        );
      }
      validation = { measured: judgedSteps(measures.service), server: judgedSteps(measures.server) };
    }
  }
  io.stdout.write(`${validationTable(fit, validation.measured, validation.server)}\n`);
  io.stdout.write(`${validationVerdict(fit, validation.measured, validation.server)}\n`);
  return validation;
}

/** How many of `measures` have a step at `concurrency`. */
const measuresAt = (measures: readonly (readonly StepMeasure[])[], concurrency: number) =>
  measures.filter((steps) => steps.some((step) => step.concurrency === concurrency)).length;

/**
 * The steps of several measures, one per concurrency (a step no measure had is not there): with
 * MEASURES_OF_A_STEP_OFF measures or more, each figure the median of that concurrency's; with
 * fewer, the latest measure itself (a first measure beyond the tolerance, the likeliest disturbed,
 * must not weigh half of a median of two). A figure that is no number in any measure is no
 * number in the median, so that it still disagrees.
 */
export function judgedSteps(measures: readonly (readonly StepMeasure[])[]): StepMeasure[] {
  const byConcurrency = new Map<number, StepMeasure[]>();
  for (const steps of measures)
    for (const step of steps) byConcurrency.set(step.concurrency, [...(byConcurrency.get(step.concurrency) ?? []), step]);
  const figure = (steps: readonly StepMeasure[], key: Exclude<keyof StepMeasure, "concurrency">) => median(steps.map((step) => step[key]));
  return [...byConcurrency.entries()]
    .sort(([a], [b]) => a - b)
    .map(([concurrency, steps]) =>
      steps.length < MEASURES_OF_A_STEP_OFF
        ? steps.at(-1)!
        : {
            concurrency,
            throughputPerSec: figure(steps, "throughputPerSec"),
            meanLatencyMs: figure(steps, "meanLatencyMs"),
            p50Ms: figure(steps, "p50Ms"),
            p90Ms: figure(steps, "p90Ms"),
            p99Ms: figure(steps, "p99Ms"),
            requests: Math.round(figure(steps, "requests")),
            errors: Math.round(figure(steps, "errors")),
          },
    );
}

function median(values: readonly number[]): number {
  if (values.some(Number.isNaN)) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One measured step beside ./server's step at its concurrency (if it has one) and the model's curve there. */
interface ValidationRow {
  readonly concurrency: number;
  readonly measured: ValidationPoint;
  readonly server: ValidationPoint | undefined;
  readonly model: ValidationPoint;
}

type ValidationPoint = Pick<StepMeasure, "throughputPerSec" | "meanLatencyMs">;

function validationRows(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): ValidationRow[] {
  return measured.map((step) => ({
    concurrency: step.concurrency,
    measured: step,
    server: server.find((other) => other.concurrency === step.concurrency),
    model: {
      throughputPerSec: closedLoopThroughputPerSec(fit.spec, step.concurrency, fit.overheadMs),
      meanLatencyMs: closedLoopLatencyMs(fit.spec, step.concurrency, fit.overheadMs),
    },
  }));
}

/** Measured vs ./server with the fitted model vs the model's own curve, per concurrency. */
export function validationTable(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): string {
  const header = "concurrency   req/s: measured  ./server    model   mean latency: measured  ./server    model";
  const cell = (value: number | undefined, width: number) => (value === undefined ? "-" : value.toFixed(1)).padStart(width);
  const rows = validationRows(fit, measured, server).map(
    (row) =>
      `${String(row.concurrency).padStart(11)}   ${cell(row.measured.throughputPerSec, 15)} ${cell(row.server?.throughputPerSec, 9)} ` +
      `${cell(row.model.throughputPerSec, 8)}   ${cell(row.measured.meanLatencyMs, 22)} ${cell(row.server?.meanLatencyMs, 9)} ` +
      `${cell(row.model.meanLatencyMs, 8)}`,
  );
  return [`validation (latencies in ms):`, header, ...rows].join("\n");
}

/**
 * -validate's columns agree when ./server's and the model's throughput and mean latency are each
 * within this of the measured ones at every measured concurrency (docs/probe.md says why 15 %).
 */
export const AGREEMENT_TOLERANCE = 0.15;

/** A row's largest difference from the measured ones: which column, and how far off. */
interface Difference {
  readonly concurrency: number;
  /** "./server's mean latency at concurrency 4", or why there is no figure. */
  readonly what: string;
  /** The fraction off the measured; Infinity where ./server has no step. */
  readonly off: number;
  readonly missing: boolean;
}

/** Whether a difference is worse than another: a figure that is no number (NaN) is worse than any, and stays so. */
const worse = (off: number, than: number) => !Number.isNaN(than) && !(off <= than);

const percentOff = (row: Difference) => `${(100 * row.off).toFixed(1)} % off the measured`;

function differences(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): Difference[] {
  return validationRows(fit, measured, server).map((row) => {
    if (row.server === undefined)
      return { concurrency: row.concurrency, what: `./server has no step at concurrency ${row.concurrency}`, off: Infinity, missing: true };
    const columns = [
      ["./server's throughput", row.server.throughputPerSec, row.measured.throughputPerSec],
      ["the model's throughput", row.model.throughputPerSec, row.measured.throughputPerSec],
      ["./server's mean latency", row.server.meanLatencyMs, row.measured.meanLatencyMs],
      ["the model's mean latency", row.model.meanLatencyMs, row.measured.meanLatencyMs],
    ] as const;
    let worst = { off: 0, column: "" };
    for (const [column, value, reference] of columns) {
      const off = Math.abs(value / reference - 1);
      if (worse(off, worst.off)) worst = { off, column };
    }
    return { concurrency: row.concurrency, what: `${worst.column} at concurrency ${row.concurrency}`, off: worst.off, missing: false };
  });
}

/** The rows beyond the tolerance (a figure off by NaN among them), each with its largest difference, as a line's words. */
export function disagreements(
  fit: ModelFit,
  measured: readonly StepMeasure[],
  server: readonly StepMeasure[],
): { readonly concurrency: number; readonly what: string }[] {
  return differences(fit, measured, server)
    .filter((row) => !(row.off <= AGREEMENT_TOLERANCE))
    .map((row) => ({ concurrency: row.concurrency, what: row.missing ? row.what : `${row.what} ${percentOff(row)}` }));
}

/** Whether the table's columns agree, with the largest difference from the measured ones, in one line. */
export function validationVerdict(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): string {
  const rows = differences(fit, measured, server);
  const missing = rows.find((row) => row.missing);
  if (missing !== undefined) return `validation: disagrees: ${missing.what}`;
  const worst = rows.reduce((most, row) => (worse(row.off, most.off) ? row : most));
  const tolerance = `${(100 * AGREEMENT_TOLERANCE).toFixed(0)} %`;
  return worst.off <= AGREEMENT_TOLERANCE
    ? `validation: agrees: ./server and the model within ${tolerance} of the measured at every step (the most, ${worst.what}, ${percentOff(worst)})`
    : `validation: disagrees: ${worst.what} is ${percentOff(worst)}, beyond ${tolerance}`;
}

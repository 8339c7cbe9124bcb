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

/**
 * -validate: starts ./server with the fitted model on a free loopback port (in its own
 * process group, stopped by its pid), probes it at the measured steps' concurrencies with
 * the same limits, and prints measured, ./server and model side by side.
 */
export async function validateFit(
  fit: ModelFit,
  measured: readonly StepMeasure[],
  limits: ProbeLimits,
  interrupt: AbortSignal,
  io: ProgramIo,
): Promise<StepMeasure[]> {
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
    const port = LISTENING.exec(line)![1]!;
    const url = new URL(`http://127.0.0.1:${port}/api`);
    const sink = { write: () => true };
    const run = await probeSteps(
      url,
      measured.map((step) => step.concurrency),
      limits,
      undefined,
      interrupt,
      sink,
    );
    io.stdout.write(`${validationTable(fit, measured, run.steps)}\n${validationVerdict(fit, measured, run.steps)}\n`);
    return [...run.steps];
  } finally {
    interrupt.removeEventListener("abort", stopOnInterrupt);
    await server.stop();
  }
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

/** Whether the table's columns agree, with the largest difference from the measured ones, in one line. */
export function validationVerdict(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): string {
  let worst = { off: 0, what: "" };
  for (const row of validationRows(fit, measured, server)) {
    if (row.server === undefined) return `validation: disagrees: ./server has no step at concurrency ${row.concurrency}`;
    const columns = [
      ["./server's throughput", row.server.throughputPerSec, row.measured.throughputPerSec],
      ["the model's throughput", row.model.throughputPerSec, row.measured.throughputPerSec],
      ["./server's mean latency", row.server.meanLatencyMs, row.measured.meanLatencyMs],
      ["the model's mean latency", row.model.meanLatencyMs, row.measured.meanLatencyMs],
    ] as const;
    for (const [what, value, reference] of columns) {
      const off = Math.abs(value / reference - 1);
      if (!(off <= worst.off)) worst = { off, what: `${what} at concurrency ${row.concurrency}` };
    }
  }
  const tolerance = `${(100 * AGREEMENT_TOLERANCE).toFixed(0)} %`;
  const largest = `${(100 * worst.off).toFixed(1)} % off the measured`;
  return worst.off <= AGREEMENT_TOLERANCE
    ? `validation: agrees: ./server and the model within ${tolerance} of the measured at every step (the most, ${worst.what}, ${largest})`
    : `validation: disagrees: ${worst.what} is ${largest}, beyond ${tolerance}`;
}

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
    io.stdout.write(`${validationTable(fit, measured, run.steps)}\n`);
    return [...run.steps];
  } finally {
    interrupt.removeEventListener("abort", stopOnInterrupt);
    await server.stop();
  }
}

/** Measured vs ./server with the fitted model vs the model's own curve, per concurrency. */
export function validationTable(fit: ModelFit, measured: readonly StepMeasure[], server: readonly StepMeasure[]): string {
  const header = "concurrency   req/s: measured  ./server    model   mean latency: measured  ./server    model";
  const rows = measured.map((step) => {
    const twin = server.find((other) => other.concurrency === step.concurrency);
    const cell = (value: number | undefined, width: number) => (value === undefined ? "-" : value.toFixed(1)).padStart(width);
    return (
      `${String(step.concurrency).padStart(11)}   ${cell(step.throughputPerSec, 15)} ${cell(twin?.throughputPerSec, 9)} ` +
      `${cell(closedLoopThroughputPerSec(fit.spec, step.concurrency, fit.overheadMs), 8)}   ${cell(step.meanLatencyMs, 22)} ${cell(twin?.meanLatencyMs, 9)} ` +
      `${cell(closedLoopLatencyMs(fit.spec, step.concurrency, fit.overheadMs), 8)}`
    );
  });
  return [`validation (latencies in ms):`, header, ...rows].join("\n");
}

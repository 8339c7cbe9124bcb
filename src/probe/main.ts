import { formatDuration } from "../cli/duration.ts";
import { redactUrl } from "../cli/redact-url.ts";
import { checkOutputFileWritable, writeOutputFile } from "../runtime/output-files.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { modelFigures } from "../model/servers/models.ts";
import { describeModel, describeModelSpec } from "../server/model-flags.ts";
import { fitModels, type FitResult, MIN_STEPS_TO_FIT } from "./fit/fit-models.ts";
import { betterHeldOutLine, heldOutErrors, heldOutLine } from "./fit/held-out.ts";
import type { StepMeasure } from "./fit/step-measure.ts";
import { parseProbeArgs, type ProbeOptions } from "./options.ts";
import { describeEnd, type ProbeLimits, probeSteps } from "./probe-run.ts";
import { probeReportHtml } from "./report.ts";
import { everydayErrorRate } from "./saturation.ts";
import { scenarioYaml } from "./scenario-out.ts";
import { validateFit } from "./validate.ts";

/** Exit code of a run stopped by Ctrl-C, as a shell reports it. */
const EXIT_INTERRUPTED = 130;

export async function main(argv: readonly string[], io: ProgramIo): Promise<number> {
  const parsed = parseProbeArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const options = parsed.options;
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort();
  process.on("SIGINT", onInterrupt);
  try {
    return await probe(options, interrupt.signal, io);
  } finally {
    process.off("SIGINT", onInterrupt);
  }
}

function limitsOf(options: ProbeOptions): ProbeLimits {
  const values = options.values;
  return {
    stepDurationMs: values["step-duration"],
    stepRequests: values["step-requests"],
    maxRequests: values["max-requests"],
    maxRatePerSec: values["max-rate"],
    maxTimeMs: values["max-time"],
    timeoutMs: values.timeout,
    maxBodyBytes: values["max-body"],
  };
}

async function probe(options: ProbeOptions, interrupt: AbortSignal, io: ProgramIo): Promise<number> {
  const { url, values } = options;
  const limits = limitsOf(options);
  // Before any request: a probe's minutes are not spent on results that cannot be written.
  for (const path of [values.out, values.report]) if (path !== "") checkOutputFileWritable(path);
  // Credentials in the URL are never printed nor written.
  const shownUrl = redactUrl(url);
  const say = (line: string) => io.stderr.write(`probe: ${line}\n`);
  say(
    `${shownUrl}: closed-loop steps of ${options.steps.join(", ")} users, each at least ${values["step-duration"] / 1000} s and ` +
      `${values["step-requests"]} answers; limits ${values["max-requests"]} requests, ${values["max-rate"]} req/s, ${values["max-time"] / 1000} s`,
  );
  const run = await probeSteps(
    url,
    options.steps,
    limits,
    { minGrowth: values["min-growth"], maxP99Ms: options.maxP99Ms, maxErrors: values["max-errors"] },
    interrupt,
    io.stdout,
  );
  say(`${describeEnd(run.end, limits)} (${run.sent} requests sent)`);
  if (run.end.kind !== "saturated" && run.end.kind !== "interrupted") {
    say("no saturation, nothing to fit: a service's capacity is where its throughput stops growing (raise the limits or -steps)");
    return 1;
  }
  if (run.steps.length < MIN_STEPS_TO_FIT) {
    say(`${run.steps.length} steps measured; fitting needs ${MIN_STEPS_TO_FIT} (start from a lower concurrency or lengthen the steps)`);
    return run.end.kind === "interrupted" ? EXIT_INTERRUPTED : 1;
  }
  const fit = fitModels(run.steps);
  printFit(fit, run.steps, values.timeout, io);
  const errorRate = everydayErrorRate(run.steps);
  io.stdout.write(`everyday error rate: ${(100 * errorRate).toFixed(2)} % of answers before saturation\n`);
  if (values.out !== "") {
    const summary = `${describeModelSpec(fit.chosen.spec)}, fitted to ${run.steps.length} steps (latency error ${percent(fit.chosen.latencyError)})`;
    writeOutputFile(
      values.out,
      scenarioYaml({
        url: shownUrl,
        date: new Date(),
        spec: fit.chosen.spec,
        summary,
        errorRate,
        timeoutMs: values.timeout,
        load: options.load,
      }),
    );
    say(`scenario written to ${values.out}: ./sim ${values.out}, npm run choose -- ${values.out}`);
  }
  let validation: readonly StepMeasure[] | undefined;
  if (values.validate && run.end.kind !== "interrupted") {
    validation = await validateFit(fit.chosen, run.steps, limits, interrupt, io);
  }
  if (values.report !== "") {
    writeOutputFile(values.report, await probeReportHtml({ url: shownUrl, steps: run.steps, fit, validation }));
    say(`report written to ${values.report}`);
  }
  return interrupt.aborted ? EXIT_INTERRUPTED : 0;
}

const percent = (fraction: number) => `${(100 * fraction).toFixed(1)} %`;

function printFit(fit: FitResult, steps: readonly StepMeasure[], timeoutMs: number, io: ProgramIo): void {
  for (const model of fit.fits) {
    io.stdout.write(
      `fit ${describeModelSpec(model.spec)}${model.overheadMs > 0 ? ` + ${formatDuration(model.overheadMs)} outside the service` : ""}: latency error ${percent(model.latencyError)}, throughput error ${percent(model.throughputError)}\n`,
    );
  }
  const heldOut = heldOutErrors(steps);
  io.stdout.write(`${heldOutLine(heldOut)}\n`);
  const figures = modelFigures(fit.chosen.spec, timeoutMs);
  io.stdout.write(`picked ${fit.chosen.spec.kind}: ${describeModel(fit.chosen.spec, figures, timeoutMs)}\n`);
  const better = betterHeldOutLine(heldOut, fit.chosen.spec.kind);
  if (better !== undefined) io.stdout.write(`${better}\n`);
  const peak = steps.reduce((best, step) => (step.throughputPerSec > best.throughputPerSec ? step : best));
  const off = figures.capacityPerSec / peak.throughputPerSec - 1;
  io.stdout.write(
    `measured saturation: ${peak.throughputPerSec.toFixed(1)} req/s (at concurrency ${peak.concurrency}); ` +
      `model capacity ${figures.capacityPerSec.toFixed(1)} req/s (${off >= 0 ? "+" : ""}${percent(off)})\n`,
  );
}

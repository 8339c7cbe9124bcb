import { formatDuration } from "../cli/duration.ts";
import { redactUrl } from "../cli/redact-url.ts";
import { checkOutputFileWritable, writeOutputFile } from "../runtime/output-files.ts";
import { readInputFile } from "../runtime/input-files.ts";
import { InputFileError } from "../cli/usage-error.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { modelFigures, type ServerModelSpec } from "../model/servers/models.ts";
import { describeModel, describeModelSpec } from "../model/servers/model-flags.ts";
import { FAMILY_NOISE_FLOOR, fitModels, type FitResult, MIN_STEPS_TO_FIT } from "./fit/fit-models.ts";
import { fitUsl, uslLines } from "./fit/usl.ts";
import { betterHeldOutLine, heldOutErrors, heldOutLine } from "./fit/held-out.ts";
import type { StepMeasure } from "./fit/step-measure.ts";
import { parseProbeArgs, type ProbeOptions } from "../options/probe.ts";
import { describeEnd, formatStep, type ProbeLimits, probeSteps } from "./probe-run.ts";
import { readLoadTest } from "./from/formats.ts";
import { LoadTestFileError } from "./from/load-test.ts";
import { probeReportHtml } from "./report.ts";
import { everydayErrorRate, saturation } from "./saturation.ts";
import { scenarioYaml } from "./scenario-out.ts";
import { type Validation, validateFit } from "./validate.ts";
import { type OverloadFindings, type OverloadLimits, probeOverload } from "./overload/overload.ts";
import { overloadScenario, overloadScenarioLines } from "./overload/settings.ts";

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

/** What the probe's own -max-requests and -max-time leave for measuring the service again (-validate); undefined when nothing. */
function limitsLeft(options: ProbeOptions, limits: ProbeLimits, spent: { requests: number; sinceMs: number }): ProbeLimits | undefined {
  const requests = options.values["max-requests"] - spent.requests;
  const timeMs = options.values["max-time"] - spent.sinceMs;
  return requests > 0 && timeMs > 0 ? { ...limits, maxRequests: requests, maxTimeMs: timeMs } : undefined;
}

/** The phase past saturation's bounds: its own flags, and what the steps left of -max-requests. */
function overloadLimitsOf(options: ProbeOptions, requestsLeft: number): OverloadLimits {
  const values = options.values;
  return {
    factor: values["overload-factor"],
    durationMs: values["overload-time"],
    maxRequests: Math.min(values["overload-max-requests"], requestsLeft),
    settleMs: values["overload-settle"],
    maxRatePerSec: values["max-rate"],
    timeoutMs: values.timeout,
    maxBodyBytes: values["max-body"],
  };
}

async function probe(options: ProbeOptions, interrupt: AbortSignal, io: ProgramIo): Promise<number> {
  const { values } = options;
  // Before any request: a probe's minutes are not spent on results that cannot be written.
  for (const path of [values.out, values.report]) if (path !== "") checkOutputFileWritable(path);
  if (options.url === undefined) return fitLoadTests(options, io);
  const url = options.url;
  const limits = limitsOf(options);
  // Credentials in the URL are never printed nor written.
  const shownUrl = redactUrl(url);
  say(
    io,
    `${shownUrl}: closed-loop steps of ${options.steps.join(", ")} users, each at least ${values["step-duration"] / 1000} s and ` +
      `${values["step-requests"]} answers; limits ${values["max-requests"]} requests, ${values["max-rate"]} req/s, ${values["max-time"] / 1000} s`,
  );
  const startedAt = performance.now();
  const run = await probeSteps(
    url,
    options.steps,
    limits,
    { minGrowth: values["min-growth"], maxP99Ms: options.maxP99Ms, maxErrors: values["max-errors"] },
    interrupt,
    io.stdout,
  );
  say(io, `${describeEnd(run.end, limits)} (${run.sent} requests sent)`);
  if (run.end.kind !== "saturated" && run.end.kind !== "interrupted") {
    say(io, "no saturation, nothing to fit: a service's capacity is where its throughput stops growing (raise the limits or -steps)");
    return 1;
  }
  if (run.steps.length < MIN_STEPS_TO_FIT) {
    say(io, `${run.steps.length} steps measured; fitting needs ${MIN_STEPS_TO_FIT} (start from a lower concurrency or lengthen the steps)`);
    return run.end.kind === "interrupted" ? EXIT_INTERRUPTED : 1;
  }
  const requestsLeft = values["max-requests"] - run.sent;
  const overloadLimits = values["no-overload"] || requestsLeft <= 0 ? undefined : overloadLimitsOf(options, requestsLeft);
  const overload =
    overloadLimits === undefined || run.end.kind === "interrupted"
      ? undefined
      : await probeOverload(url, run.steps, overloadLimits, io.stdout, interrupt);
  if (!values["no-overload"] && requestsLeft <= 0) say(io, "no phase past saturation: the steps spent -max-requests");
  const fit = fitAndWrite(run.steps, { shown: shownUrl, url: shownUrl, overload }, options, io);
  let validation: Validation | undefined;
  if (values.validate && run.end.kind !== "interrupted" && !interrupt.aborted) {
    // At most what the overload phase was allowed, so that -max-requests holds whatever it sent.
    const spent = { requests: run.sent + (overloadLimits?.maxRequests ?? 0), sinceMs: performance.now() - startedAt };
    validation = await validateFit(fit.chosen, run.steps, { url, limits: limitsLeft(options, limits, spent) }, limits, interrupt, io);
  }
  const measuredAgain = validation?.measured.filter((step) => !run.steps.includes(step));
  await writeReport(options, { url: shownUrl, steps: run.steps, fit, validation: validation?.server, measuredAgain }, io);
  return interrupt.aborted ? EXIT_INTERRUPTED : 0;
}

/** A load test's summary is kilobytes; a file past this is not one, and is refused before it is read whole. */
const MAX_LOAD_TEST_BYTES = 16 * 1024 * 1024;

/** A file read as a load test; what is wrong with it is an InputFileError of one line (exit 2). */
function readLoadTestFile(file: string, text: string) {
  try {
    return readLoadTest(file, text);
  } catch (error) {
    if (error instanceof LoadTestFileError) throw new InputFileError(error.message);
    throw error;
  }
}

const say = (io: ProgramIo, line: string) => io.stderr.write(`probe: ${line}\n`);

/** -from: the steps of the user's own load tests, fitted as a probe's are; nothing is sent. */
async function fitLoadTests(options: ProbeOptions, io: ProgramIo): Promise<number> {
  const steps: StepMeasure[] = [];
  for (const file of options.from) {
    const text = await readInputFile(file, "load test", MAX_LOAD_TEST_BYTES + 1);
    if (Buffer.byteLength(text) > MAX_LOAD_TEST_BYTES)
      throw new InputFileError(`${file}: more than ${MAX_LOAD_TEST_BYTES} bytes; a load test's summary is far smaller`);
    const reading = readLoadTestFile(file, text);
    say(io, `${file}: ${reading.format}, ${reading.steps.length} step${reading.steps.length === 1 ? "" : "s"}`);
    for (const assumed of reading.assumed) say(io, `${file}: ${assumed}`);
    steps.push(...reading.steps);
  }
  steps.sort((a, b) => a.concurrency - b.concurrency);
  for (const step of steps) io.stdout.write(`${formatStep(step)}\n`);
  const shown = `load tests ${options.from.join(", ")}`;
  const concurrencies = new Set(steps.map((step) => step.concurrency)).size;
  if (concurrencies < MIN_STEPS_TO_FIT) {
    say(
      io,
      `${steps.length} steps in the files, at ${concurrencies} concurrencies; fitting needs ${MIN_STEPS_TO_FIT} concurrencies (add runs at more of them)`,
    );
    return 1;
  }
  const growth = saturation(steps, { minGrowth: options.values["min-growth"], maxP99Ms: Infinity, maxErrors: 1 });
  if (growth === undefined) {
    say(
      io,
      `no saturation in the files: the throughput still grows at the highest concurrency (${steps.at(-1)!.concurrency}), ` +
        "so no capacity to fit (add a run at a higher concurrency, past where the throughput stops growing)",
    );
    return 1;
  }
  const fit = fitAndWrite(steps, { shown }, options, io);
  await writeReport(options, { url: shown, steps, fit, validation: undefined }, io);
  return 0;
}

/** The fit of the steps, printed, and the scenario file written with -out. */
function fitAndWrite(
  steps: readonly StepMeasure[],
  source: { shown: string; url?: string; overload?: OverloadFindings | undefined },
  options: ProbeOptions,
  io: ProgramIo,
): FitResult {
  const { values } = options;
  const fit = fitModels(steps);
  printFit(fit, steps, values.timeout, io);
  const errorRate = everydayErrorRate(steps);
  io.stdout.write(`everyday error rate: ${(100 * errorRate).toFixed(2)} % of answers before saturation\n`);
  if (values.out !== "") {
    const overload = source.overload === undefined ? undefined : overloadScenario(source.overload, fit.chosen.spec, new Date());
    const summary = `${describeModelSpec(fit.chosen.spec)}, fitted to ${steps.length} steps (latency error ${percent(fit.chosen.latencyError)})`;
    writeOutputFile(
      values.out,
      scenarioYaml({
        probed: source.shown,
        url: source.url,
        date: new Date(),
        spec: fit.chosen.spec,
        summary,
        errorRate,
        timeoutMs: values.timeout,
        load: options.load,
        overload,
      }),
    );
    if (overload !== undefined) for (const line of overloadScenarioLines(overload)) io.stdout.write(`${line}\n`);
    say(io, `scenario written to ${values.out}: ./sim ${values.out}, npm run choose -- ${values.out}`);
  }
  return fit;
}

async function writeReport(options: ProbeOptions, report: Parameters<typeof probeReportHtml>[0], io: ProgramIo): Promise<void> {
  if (options.values.report === "") return;
  writeOutputFile(options.values.report, await probeReportHtml(report));
  say(io, `report written to ${options.values.report}`);
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
  // The queue model's fit, the one family with threads.
  const queue = fit.fits.map((candidate) => candidate.spec).find((spec) => "pool" in spec) as Extract<ServerModelSpec, { pool: unknown }>;
  const pickedError = Math.sqrt(fit.chosen.meanSquare);
  for (const line of uslLines(
    steps,
    fitUsl(steps),
    queue.pool.threads,
    { kind: fit.chosen.spec.kind, error: pickedError, isUsl: fit.chosen === fit.usl },
    FAMILY_NOISE_FLOOR,
  ))
    io.stdout.write(`${line}\n`);
  const peak = steps.reduce((best, step) => (step.throughputPerSec > best.throughputPerSec ? step : best));
  const off = figures.capacityPerSec / peak.throughputPerSec - 1;
  io.stdout.write(
    `measured saturation: ${peak.throughputPerSec.toFixed(1)} req/s (at concurrency ${peak.concurrency}); ` +
      `model capacity ${figures.capacityPerSec.toFixed(1)} req/s (${off >= 0 ? "+" : ""}${percent(off)})\n`,
  );
}

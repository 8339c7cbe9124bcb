import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { givenFlagNames, parseValue } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { findStrategy, STRATEGY_PARAMETER_FLAGS, strategyOfRun } from "../strategies/registry.ts";
import { makeOutputDir, writeOutputFile } from "../runtime/output-files.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { DEFAULT_PHASES } from "../model/experiment-phases.ts";
import { type Fault, faultName, formatFault } from "../model/faults/fault-schedule.ts";
import { serverIsBack } from "../model/verdict.ts";
import { modelOf } from "../model/servers/models.ts";
import { bandsText, troubleBands } from "../model/faults/bands.ts";
import { serverModelOf } from "../config/server-system.ts";
import { describeModel } from "../model/servers/model-flags.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { seconds } from "../model/seconds.ts";
import { defaultParallelism, WorkerPool } from "../runtime/worker-pool.ts";
import { comparisonTable, renderSvg, type StrategyResult } from "../report/report.ts";
import { parseStrategies, type StrategyRun } from "../strategies/runs.ts";
import { scenarioSettings, summaryJson } from "../report/summary-file.ts";
import { provenance } from "../runtime/provenance.ts";
import { bisectCriticalOutage } from "../runner/critical-outage.ts";
import { configFrom, parseSimArgs, parseSweep, SIM_FLAGS, SIM_TARGET, type SimFlagValues } from "../options/sim.ts";
import { blamingScenarioFile, withScenarioFile } from "../scenario-file/arguments.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import { retryLoadWhileDown } from "../runner/retry-load.ts";
import type { StrategyRunReply } from "./sim-worker.ts";
import { sweepChart } from "./sweep-chart.ts";
import { playSimulation } from "./playback.ts";
import { selectWorkload } from "../cli/workload.ts";
import { occSimMain } from "./occ-main.ts";
import { chainMain } from "./chain-main.ts";
import { chainConfigFrom } from "../scenario-file/chain-config.ts";
import { OCC_SIM_TARGET } from "../options/occ.ts";
import { figuresOf } from "../runner/simulate.ts";
import { runStrategy, type SimRun, simRuns, trialMetrics, withStrategy } from "./trial.ts";

// The simulator's single run, for the tests built on it.
export { runTrial as run } from "./trial.ts";

function selectedStrategy(values: SimFlagValues): StrategyRun {
  return parseStrategies(values["exponential-backoff"] ? "exponential-backoff" : values.strategy)[0]!;
}

/** Each strategy of -strategies checked with its own flags; a parameter flag that none of them reads is refused. */
function checkEachStrategy(values: SimFlagValues, strategies: readonly SimRun[], given: ReadonlySet<string>): void {
  for (const strategy of strategies) configFrom(withStrategy(values, strategy));
  for (const flag of STRATEGY_PARAMETER_FLAGS) {
    if (!given.has(flag.name) || strategies.some((run) => flag.name in findStrategy(strategyOfRun(run.name))!.parameters)) continue;
    throw new UsageError(`-${flag.name} does not apply to any of -strategies ${values.strategies}`);
  }
}

function printAnalysis(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[]): void {
  const config = configFrom(values);
  const spec = serverModelOf(config);
  const note = modelOf(spec).timeoutNote?.(spec, config.timeoutMs);
  const timeoutNote = note === undefined ? "" : `sim: ${note}\n`;
  const open = config.arrivals?.kind === "open" ? config.arrivals : undefined;
  const baselinePerSec = open?.ratePerSec ?? config.users / ((config.retry.thinkTimeMeanMs + config.latency.baseDelayMs) / 1000);
  const outageMs = config.outages[0]?.durationMs ?? DEFAULT_PHASES.outageMs;
  const offeredBy =
    open === undefined
      ? `${config.users} clients, lambda ${formatDuration(config.retry.thinkTimeMeanMs)}`
      : `open-loop arrivals, at most ${open.maxChains} alive`;
  io.stderr.write(
    timeoutNote +
      `sim: ${describeModel(spec, figuresOf(config), config.timeoutMs)}\n` +
      `sim: offered load ${baselinePerSec.toFixed(1)} req/s (${offeredBy})\n` +
      `sim: the server runs out of memory at ${config.maxInService} requests in service (-max-in-service): ` +
      "a real one dies there, and so the run ends there\n",
  );
  const loads = strategies.map((strategy) => {
    const strategyConfig = configFrom(withStrategy(values, strategy));
    const load = retryLoadWhileDown(strategyConfig, outageMs);
    return `${strategy.name} ${load.toFixed(1)}/s (${(load / baselinePerSec).toFixed(2)}x)`;
  });
  io.stderr.write(`sim: attempts per second after ${formatDuration(outageMs)} of outage: ${loads.join("; ")}\n`);
  const faults = [...config.outages.map((outage) => ({ kind: "stop" as const, factor: 1, ...outage })), ...(config.faults ?? [])];
  if (values.faults !== undefined) {
    io.stderr.write(`sim: faults: ${faults.map((fault) => formatFault(fault, formatDuration)).join(", ")}\n`);
  }
}

/**
 * Where the simulator's independent trials run: in this thread, one after another, or on a
 * pool of worker threads. Either way each result comes back to its own promise and is
 * printed in the order of the sequential run, so the output is the same.
 */
interface Trials {
  readonly parallelism: number;
  metrics(values: SimFlagValues): Promise<ScenarioMetrics>;
  close(): Promise<void>;
}

function inThisThread(): Trials {
  return { parallelism: 1, metrics: async (values) => trialMetrics(values), close: async () => {} };
}

function onWorkers(size: number): Trials & { readonly pool: WorkerPool } {
  const pool = new WorkerPool("sim", size);
  return {
    parallelism: size,
    pool,
    metrics: (values) => pool.run<ScenarioMetrics>("metrics", values),
    close: () => pool.close(),
  };
}

function trialsFor(values: SimFlagValues, jobs: number): Trials {
  const size = Math.min(values.parallel ?? defaultParallelism(), jobs);
  return size > 1 ? onWorkers(size) : inThisThread();
}

export const CRITICAL_UPPER_MS = 600_000;
export const CRITICAL_RESOLUTION_MS = 250;

/**
 * The trouble whose length -find-critical-outage varies: the one fault of -faults, or the
 * first outage; and the flag values with that trouble `lengthMs` long, observed as long
 * after it as the command line observes after the given length.
 */
export function criticalTrouble(values: SimFlagValues): {
  readonly name: string;
  readonly observeMs: number;
  readonly withLength: (lengthMs: number) => SimFlagValues;
} {
  const config = configFrom(values);
  const fault: Fault = config.faults?.[0] ?? { kind: "stop", factor: 1, ...(config.outages[0] ?? { atMs: 0, durationMs: 0 }) };
  const observeMs = Math.max(values.duration - fault.atMs - fault.durationMs, 1);
  const viaFaults = values.faults !== undefined;
  return {
    observeMs,
    name: viaFaults ? faultName(fault) : "outage",
    withLength: (lengthMs) => {
      const trial = { ...values, duration: fault.atMs + lengthMs + observeMs };
      if (viaFaults) trial.faults = formatFault({ ...fault, durationMs: lengthMs }, formatDuration);
      else {
        trial.outage = formatDuration(lengthMs);
        trial["outage-at"] = formatDuration(fault.atMs);
      }
      return trial;
    },
  };
}

async function findCriticalOutage(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[]): Promise<void> {
  const trouble = criticalTrouble(values);
  const trials = trialsFor(values, Number.POSITIVE_INFINITY);
  io.stdout.write(
    `longest ${trouble.name} after which the server still recovers: back at or below its limit within ${formatDuration(trouble.observeMs)} of its end:\n`,
  );
  try {
    let searching = strategies.length;
    const answers = strategies.map(async (strategy) => {
      const base = withStrategy(values, strategy);
      const lengthened = criticalTrouble(base);
      // Metastability is the server's: the clients' own backoff may still keep them away.
      const recovers = async (lengthMs: number) => serverIsBack((await trials.metrics(lengthened.withLength(lengthMs))).verdict);
      // The workers not busy with other strategies' searches evaluate ahead in this one.
      const width = () => Math.max(1, Math.floor(trials.parallelism / searching));
      try {
        return await bisectCriticalOutage(recovers, width, CRITICAL_RESOLUTION_MS, CRITICAL_UPPER_MS);
      } finally {
        searching--;
      }
    });
    for (const [index, strategy] of strategies.entries()) {
      const answer = await answers[index]!;
      const text =
        answer.kind === "none"
          ? `none: it does not recover even from a ${formatDuration(CRITICAL_RESOLUTION_MS)} ${trouble.name}`
          : answer.kind === "at-least"
            ? `at least ${formatDuration(CRITICAL_UPPER_MS)}`
            : `${formatDuration(answer.lowMs)} (collapses after ${formatDuration(answer.highMs)})`;
      io.stdout.write(`  ${strategy.name.padEnd(20)} ${text}\n`);
    }
  } finally {
    await trials.close();
  }
}

const firstOutageLength = (values: SimFlagValues) => configFrom(values).outages[0]?.durationMs ?? 0;

/** The flag values of each sweep point, checked like the flags themselves. */
function sweepTrials(values: SimFlagValues, sweepText: string): { param: string; points: string[]; trials: SimFlagValues[] } {
  const { param, values: points } = parseSweep(sweepText);
  const spec = SIM_FLAGS.find((flag) => flag.name === param)!;
  const trials = points.map((point) => {
    try {
      const trial = { ...values, [param]: parseValue(spec, point) } as SimFlagValues;
      configFrom(trial);
      return trial;
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`in -sweep: ${error.message}`);
      throw error;
    }
  });
  return { param, points, trials };
}

async function sweep(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[], sweepText: string): Promise<void> {
  const { param, points, trials: pointValues } = sweepTrials(values, sweepText);
  // A directory that cannot be made fails now, not after the whole sweep has run.
  const dir = values.out === undefined ? undefined : resolve(values.out);
  if (dir !== undefined) makeOutputDir(dir);
  const planned: { value: string; strategy: string; trial: SimFlagValues }[] = [];
  for (const [index, point] of points.entries()) {
    for (const strategy of strategies) {
      const trial = withStrategy(pointValues[index]!, strategy);
      if (param === "outage") {
        // A longer outage keeps the same observation time after it.
        const extra = configFrom(trial).outages[0]!.durationMs - firstOutageLength(values);
        trial.duration = values.duration + extra;
      }
      planned.push({ value: point, strategy: strategy.name, trial });
    }
  }
  const trials = trialsFor(values, planned.length);
  let rows: { value: string; strategy: string; metrics: ScenarioMetrics }[];
  try {
    const metrics = planned.map(({ trial }) => trials.metrics(trial));
    rows = [];
    for (const [index, { value, strategy }] of planned.entries()) rows.push({ value, strategy, metrics: await metrics[index]! });
  } finally {
    await trials.close();
  }
  const tenths = (ms: number | undefined) => (ms === undefined ? "" : seconds(ms).toFixed(1));
  const header = `${param},strategy,verdict,peak_concurrency,peak_delay_s,server_recovery_s,client_recovery_s`;
  const csv = [
    header,
    ...rows.map(({ value, strategy, metrics }) =>
      [
        value,
        strategy,
        metrics.verdict,
        metrics.peakConcurrencyAfterResume,
        Number.isFinite(metrics.peakDelayAfterResumeMs) ? (metrics.peakDelayAfterResumeMs / 1000).toPrecision(6) : "Infinity",
        tenths(metrics.serverRecoveryMs),
        tenths(metrics.clientRecoveryMs),
      ].join(","),
    ),
  ].join("\n");
  io.stdout.write(`${csv}\n`);
  if (dir !== undefined) {
    writeOutputFile(join(dir, "sweep.csv"), `${csv}\n`);
    writeOutputFile(join(dir, "sweep.svg"), await renderSvg(sweepChart(param, points, rows)));
    io.stderr.write(`sim: wrote ${join(dir, "sweep.csv")} and ${join(dir, "sweep.svg")}\n`);
  }
}

/** What plays each run back on the dashboard (-dashboard), in order. */
type Playback = Awaited<ReturnType<typeof playSimulation>>;

/**
 * Every strategy's run, printed in order; on workers when there are several and -parallel
 * allows. With -dashboard each run is played back once printed.
 */
async function runStrategies(
  io: ProgramIo,
  values: SimFlagValues,
  strategies: readonly SimRun[],
  playback: Playback | undefined,
): Promise<StrategyResult[]> {
  const trials = trialsFor(values, strategies.length);
  if (!("pool" in trials)) {
    // In this thread the lines are printed as the simulation makes them.
    const results: StrategyResult[] = [];
    for (const strategy of strategies) {
      const output = runStrategy(values, strategy, (text) => io.stdout.write(text));
      io.stderr.write(output.stderr);
      results.push(output.strategyResult);
      await playback?.play(output.strategyResult, output.outages);
    }
    return results;
  }
  const pool = (trials as ReturnType<typeof onWorkers>).pool;
  try {
    const replies = strategies.map((strategy) => pool.run<StrategyRunReply>("strategy", { values, strategy }));
    const results: StrategyResult[] = [];
    for (const reply of replies) {
      const { stdout, stderr, strategyResult, outages } = await reply;
      io.stdout.write(stdout);
      io.stderr.write(stderr);
      results.push(strategyResult);
      await playback?.play(strategyResult, outages);
    }
    return results;
  } finally {
    await trials.close();
  }
}

export async function main(argv: readonly string[], io: ProgramIo): Promise<number> {
  const selected = selectWorkload(argv);
  // A scenario file names its workload (requests when it does not); -workload beside it must agree.
  const { argv: args, scenario } = await withScenarioFile(selected.args, [SIM_TARGET, OCC_SIM_TARGET], io.stderr);
  const workload = scenario?.workload ?? selected.workload;
  if (scenario !== undefined && selected.given && selected.workload !== workload) {
    throw new UsageError(`-workload ${selected.workload} given, but ${scenario.file} is a scenario of workload ${workload}`);
  }
  if (workload === "occ") return occSimMain(args, io, scenario?.metadata);
  const commandLine = args.slice(scenario?.tokens.length ?? 0);
  return blamingScenarioFile(scenario, commandLine, SIM_FLAGS, () => requestsMain(selected.args, args, scenario, io));
}

async function requestsMain(
  argv: readonly string[],
  args: readonly string[],
  scenario: LoadedScenario | undefined,
  io: ProgramIo,
): Promise<number> {
  const parsed = parseSimArgs(args);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  if (scenario?.tiers !== undefined) {
    if (!values["print-scenario"]) return chainMain(values, givenFlagNames(args, SIM_FLAGS), scenario.tiers, io);
    chainConfigFrom(values, scenario.tiers); // the chain checked before it is written
    const { printScenario } = await import("../scenario-file/print.ts");
    io.stdout.write(await printScenario(SIM_TARGET, values, {}, scenario.metadata, scenario.tiers));
    return 0;
  }
  const strategies = simRuns(
    values.strategies === undefined ? [selectedStrategy(values)] : parseStrategies(values.strategies),
    givenFlagNames(args, SIM_FLAGS),
  );
  // Every flag checked before anything runs; with -strategies, each against the strategy that runs it
  // (a parameter flag applies to the strategies that read it, as in the demo).
  if (values.strategies === undefined) configFrom(values);
  else checkEachStrategy(values, strategies, givenFlagNames(args, SIM_FLAGS));
  if (values.sweep !== undefined) sweepTrials(values, values.sweep);
  if (values["print-scenario"]) {
    const { printScenario } = await import("../scenario-file/print.ts");
    io.stdout.write(await printScenario(SIM_TARGET, values, {}, scenario?.metadata));
    return 0;
  }
  if (values.dashboard && (values["find-critical-outage"] || values.sweep !== undefined)) {
    throw new UsageError(
      `-dashboard plays back one run per strategy; it cannot be combined with ${values.sweep === undefined ? "-find-critical-outage" : "-sweep"}`,
    );
  }
  // A results directory that cannot be made fails now, not after the runs.
  if (values.out !== undefined && values.sweep === undefined && !values["find-critical-outage"]) makeOutputDir(values.out);
  printAnalysis(io, values, strategies);
  if (values["find-critical-outage"]) {
    await findCriticalOutage(io, values, strategies);
    return 0;
  }
  if (values.sweep !== undefined) {
    await sweep(io, values, strategies, values.sweep);
    return 0;
  }
  const playback = values.dashboard ? await playSimulation(io, values) : undefined;
  const results = await runStrategies(io, values, strategies, playback);
  if (values.out !== undefined) {
    writeOutputFile(
      join(values.out, "summary.json"),
      summaryJson({ command: `sim ${argv.join(" ")}`, seed: values.seed, ...scenarioSettings(scenario) }, provenance(), results),
    );
    io.stderr.write(`sim: wrote ${join(values.out, "summary.json")}\n`);
  }
  if (!values.json) {
    const whys = results.map((result) => `${result.strategy}: ${result.metrics.verdict}: ${result.metrics.why}`);
    const faults = results[0]?.phases.faults;
    const marked = faults === undefined || faults.length === 0 ? "" : `faults: ${bandsText(troubleBands(results[0]!.phases))}\n`;
    io.stdout.write(`\n${marked}${comparisonTable(results)}\n\n${whys.join("\n")}\n`);
  }
  await playback?.finish();
  return 0;
}

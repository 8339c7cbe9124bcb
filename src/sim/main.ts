import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { parseValue } from "../cli/flags.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { concurrencyForDelay } from "../model/latency.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { defaultParallelism, WorkerPool } from "../runtime/worker-pool.ts";
import { comparisonTable, renderSvg, type StrategyResult } from "../scenario/report.ts";
import { parseStrategies, type StrategyRun } from "../scenario/strategies.ts";
import { bisectCriticalOutage } from "./critical-outage.ts";
import { parseSimArgs, parseSweep, SIM_FLAGS, type SimFlagValues } from "./options.ts";
import { retryLoadWhileDown } from "./retry-load.ts";
import type { StrategyRunReply } from "./sim-worker.ts";
import { sweepChart } from "./sweep-chart.ts";
import { configFrom, runStrategy, trialMetrics, withStrategy } from "./trial.ts";

function selectedStrategy(values: SimFlagValues): StrategyRun {
  return parseStrategies(values["exponential-backoff"] ? "exponential-backoff" : values.strategy)[0]!;
}

function printAnalysis(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[]): void {
  const config = configFrom(values);
  const tipping = concurrencyForDelay(config.latency, config.timeoutMs);
  const baselinePerSec = config.users / ((config.retry.thinkTimeMeanMs + config.latency.baseDelayMs) / 1000);
  const outageMs = config.outages[0]?.durationMs ?? 20_000;
  io.stderr.write(
    `sim: the delay reaches the ${formatDuration(config.timeoutMs)} timeout at ${tipping} requests in service ` +
      `(limit ${config.latency.limit}, factor ${config.latency.factor}, k ${config.latency.exponentDivisor}, baseDelay ${formatDuration(config.latency.baseDelayMs)})\n` +
      `sim: offered load ${baselinePerSec.toFixed(1)} req/s (${config.users} clients, lambda ${formatDuration(config.retry.thinkTimeMeanMs)})\n`,
  );
  const loads = strategies.map((strategy) => {
    const strategyConfig = configFrom(withStrategy(values, strategy));
    const load = retryLoadWhileDown(strategyConfig, outageMs);
    return `${strategy.name} ${load.toFixed(1)}/s (${(load / baselinePerSec).toFixed(2)}x)`;
  });
  io.stderr.write(`sim: attempts per second after ${formatDuration(outageMs)} of outage: ${loads.join("; ")}\n`);
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

const CRITICAL_UPPER_MS = 600_000;
const CRITICAL_RESOLUTION_MS = 250;

async function findCriticalOutage(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[]): Promise<void> {
  const observeMs = values.duration - durationOfFirstOutageStart(values) - firstOutageLength(values);
  const trials = trialsFor(values, Number.POSITIVE_INFINITY);
  io.stdout.write(
    `longest outage after which the server still recovers: concurrency back at or below the limit within ${formatDuration(observeMs)} of resuming:\n`,
  );
  try {
    let searching = strategies.length;
    const answers = strategies.map(async (strategy) => {
      const recovers = async (outageMs: number) => {
        const trial = { ...withStrategy(values, strategy), outage: formatDuration(outageMs) };
        trial.duration = durationOfFirstOutageStart(values) + outageMs + Math.max(observeMs, 1);
        trial["outage-at"] = formatDuration(durationOfFirstOutageStart(values));
        // Metastability is the server's: the clients' own backoff may still keep them away.
        return (await trials.metrics(trial)).serverRecoveryMs !== undefined;
      };
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
          ? `none: it does not recover even from a ${formatDuration(CRITICAL_RESOLUTION_MS)} outage`
          : answer.kind === "at-least"
            ? `at least ${formatDuration(CRITICAL_UPPER_MS)}`
            : `${formatDuration(answer.lowMs)} (collapses after ${formatDuration(answer.highMs)})`;
      io.stdout.write(`  ${strategy.name.padEnd(20)} ${text}\n`);
    }
  } finally {
    await trials.close();
  }
}

const durationOfFirstOutageStart = (values: SimFlagValues) => configFrom(values).outages[0]?.atMs ?? 0;
const firstOutageLength = (values: SimFlagValues) => configFrom(values).outages[0]?.durationMs ?? 0;

/** The flag values of each sweep point, checked like the flags themselves. */
function sweepTrials(values: SimFlagValues, sweepText: string): { param: string; points: string[]; trials: SimFlagValues[] } {
  const { param, values: points } = parseSweep(sweepText);
  const spec = SIM_FLAGS.find((flag) => flag.name === param)!;
  const trials = points.map((point) => {
    const trial = { ...values, [param]: param === "outage" ? point : parseValue(spec, point) } as SimFlagValues;
    configFrom(trial);
    return trial;
  });
  return { param, points, trials };
}

async function sweep(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[], sweepText: string): Promise<void> {
  const { param, points, trials: pointValues } = sweepTrials(values, sweepText);
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
  const seconds = (ms: number | undefined) => (ms === undefined ? "" : (ms / 1000).toFixed(1));
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
        seconds(metrics.serverRecoveryMs),
        seconds(metrics.clientRecoveryMs),
      ].join(","),
    ),
  ].join("\n");
  io.stdout.write(`${csv}\n`);
  if (values.out !== undefined) {
    const dir = resolve(values.out);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "sweep.csv"), `${csv}\n`);
    writeFileSync(join(dir, "sweep.svg"), await renderSvg(sweepChart(param, points, rows)));
    io.stderr.write(`sim: wrote ${join(dir, "sweep.csv")} and ${join(dir, "sweep.svg")}\n`);
  }
}

/** Every strategy's run, printed in order; on workers when there are several and -parallel allows. */
async function runStrategies(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[]): Promise<StrategyResult[]> {
  const trials = trialsFor(values, strategies.length);
  if (!("pool" in trials)) {
    // In this thread the lines are printed as the simulation makes them.
    return strategies.map((strategy) => {
      const output = runStrategy(values, strategy, (text) => io.stdout.write(text));
      io.stderr.write(output.speedLine);
      return output.strategyResult;
    });
  }
  const pool = (trials as ReturnType<typeof onWorkers>).pool;
  try {
    const replies = strategies.map((strategy) => pool.run<StrategyRunReply>("strategy", { values, strategy }));
    const results: StrategyResult[] = [];
    for (const reply of replies) {
      const { stdout, speedLine, strategyResult } = await reply;
      io.stdout.write(stdout);
      io.stderr.write(speedLine);
      results.push(strategyResult);
    }
    return results;
  } finally {
    await trials.close();
  }
}

export async function main(argv: readonly string[], io: ProgramIo): Promise<number> {
  const parsed = parseSimArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  configFrom(values); // every flag checked before anything runs
  if (values.sweep !== undefined) sweepTrials(values, values.sweep);
  const strategies = values.strategies === undefined ? [selectedStrategy(values)] : parseStrategies(values.strategies);
  printAnalysis(io, values, strategies);
  if (values["find-critical-outage"]) {
    await findCriticalOutage(io, values, strategies);
    return 0;
  }
  if (values.sweep !== undefined) {
    await sweep(io, values, strategies, values.sweep);
    return 0;
  }
  const results = await runStrategies(io, values, strategies);
  if (!values.json) io.stdout.write(`\n${comparisonTable(results)}\n`);
  return 0;
}

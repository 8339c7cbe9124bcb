import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { parseValue } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { makeOutputDir, writeOutputFile } from "../runtime/output-files.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { clientReport, formatClientLine, formatClientSummary } from "../client/reporter.ts";
import { concurrencyForDelay } from "../model/latency.ts";
import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import { comparisonTable, renderSvg, type StrategyResult } from "../scenario/report.ts";
import { parseStrategies, type StrategyRun } from "../scenario/strategies.ts";
import { formatServerLine, serverReport } from "../server/reporter.ts";
import { parseSimArgs, parseSweep, resolveSimOptions, SIM_FLAGS, type SimFlagValues } from "./options.ts";
import { retryLoadWhileDown } from "./retry-load.ts";
import { type SimulationConfig, type SimulationEvent, simulate } from "./simulate.ts";
import { sweepChart } from "./sweep-chart.ts";

/** The outage the metrics are computed around: the first. */
function phasesOf(config: SimulationConfig) {
  const first = config.outages[0] ?? { atMs: config.durationMs, durationMs: 0 };
  return { stopAtMs: first.atMs, resumeAtMs: first.atMs + first.durationMs, endMs: config.durationMs };
}

function configFrom(values: SimFlagValues): SimulationConfig {
  const options = resolveSimOptions(values);
  return {
    users: options.client.clients,
    timeoutMs: options.client.timeoutMs,
    retry: options.client.retry,
    intervalMs: options.client.intervalMs,
    latency: options.server.latency,
    cancelOnDisconnect: options.server.cancelOnDisconnect,
    maxConcurrency: options.server.maxConcurrency,
    backlog: options.server.backlog,
    reportIntervalMs: options.server.reportIntervalMs,
    outages: options.outages,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/** The flag values with another strategy selected. */
function withStrategy(values: SimFlagValues, strategy: StrategyRun): SimFlagValues {
  const name = strategy.name === "exponential-backoff" ? "reference" : strategy.name;
  return { ...values, strategy: name, "exponential-backoff": false };
}

function selectedStrategy(values: SimFlagValues): StrategyRun {
  if (values["exponential-backoff"] || values.strategy === "reference") return parseStrategies("exponential-backoff")[0]!;
  return parseStrategies(values.strategy)[0]!;
}

function run(values: SimFlagValues, strategy: string, onEvent?: (event: SimulationEvent) => void) {
  const config = configFrom(values);
  const started = performance.now();
  const result = simulate(config, onEvent);
  const wallMs = performance.now() - started;
  const metrics = computeMetrics(result.server, result.client, phasesOf(config), config.latency.limit);
  const strategyResult: StrategyResult = {
    strategy,
    phases: phasesOf(config),
    server: result.server,
    client: result.client,
    metrics,
    concurrencyLimit: config.latency.limit,
  };
  return { config, result, metrics, strategyResult, wallMs };
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

function printEvent(io: ProgramIo, json: boolean): (event: SimulationEvent) => void {
  return (event) => {
    let line: string;
    if (event.kind === "server") {
      line = json
        ? JSON.stringify({ source: "server", ...serverReport(event.atMs, event.snapshot) })
        : formatServerLine(event.atMs, event.snapshot, "utc");
    } else {
      line = json
        ? JSON.stringify({ source: "client", ...clientReport(event.report, event.inFlight, event.atMs) })
        : formatClientLine(event.report, event.inFlight);
    }
    io.stdout.write(`${line}\n`);
  };
}

function findCriticalOutage(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[]): void {
  const upperMs = 600_000;
  const resolutionMs = 250;
  const observeMs = values.duration - durationOfFirstOutageStart(values) - firstOutageLength(values);
  const recovers = (strategy: StrategyRun, outageMs: number) => {
    const trial = { ...withStrategy(values, strategy), outage: formatDuration(outageMs) };
    trial.duration = durationOfFirstOutageStart(values) + outageMs + Math.max(observeMs, 1);
    trial["outage-at"] = formatDuration(durationOfFirstOutageStart(values));
    // Metastability is the server's: the clients' own backoff may still keep them away.
    return run(trial, strategy.name).metrics.serverRecoveryMs !== undefined;
  };
  io.stdout.write(
    `longest outage after which the server still recovers: concurrency back at or below the limit within ${formatDuration(observeMs)} of resuming:\n`,
  );
  for (const strategy of strategies) {
    let answer: string;
    if (!recovers(strategy, resolutionMs)) {
      answer = `none: it does not recover even from a ${formatDuration(resolutionMs)} outage`;
    } else if (recovers(strategy, upperMs)) {
      answer = `at least ${formatDuration(upperMs)}`;
    } else {
      let low = resolutionMs;
      let high = upperMs;
      while (high - low > resolutionMs) {
        const middle = Math.round((low + high) / 2);
        if (recovers(strategy, middle)) low = middle;
        else high = middle;
      }
      answer = `${formatDuration(low)} (collapses after ${formatDuration(high)})`;
    }
    io.stdout.write(`  ${strategy.name.padEnd(20)} ${answer}\n`);
  }
}

const durationOfFirstOutageStart = (values: SimFlagValues) => configFrom(values).outages[0]?.atMs ?? 0;
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

async function sweep(io: ProgramIo, values: SimFlagValues, strategies: readonly StrategyRun[], sweepText: string): Promise<void> {
  const { param, points, trials } = sweepTrials(values, sweepText);
  // A directory that cannot be made fails now, not after the whole sweep has run.
  const dir = values.out === undefined ? undefined : resolve(values.out);
  if (dir !== undefined) makeOutputDir(dir);
  const rows: { value: string; strategy: string; metrics: ScenarioMetrics }[] = [];
  for (const [index, point] of points.entries()) {
    for (const strategy of strategies) {
      const trial = withStrategy(trials[index]!, strategy);
      if (param === "outage") {
        // A longer outage keeps the same observation time after it.
        const extra = configFrom(trial).outages[0]!.durationMs - firstOutageLength(values);
        trial.duration = values.duration + extra;
      }
      rows.push({ value: point, strategy: strategy.name, metrics: run(trial, strategy.name).metrics });
    }
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
  if (dir !== undefined) {
    writeOutputFile(join(dir, "sweep.csv"), `${csv}\n`);
    writeOutputFile(join(dir, "sweep.svg"), await renderSvg(sweepChart(param, points, rows)));
    io.stderr.write(`sim: wrote ${join(dir, "sweep.csv")} and ${join(dir, "sweep.svg")}\n`);
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
    findCriticalOutage(io, values, strategies);
    return 0;
  }
  if (values.sweep !== undefined) {
    await sweep(io, values, strategies, values.sweep);
    return 0;
  }
  const results: StrategyResult[] = [];
  for (const strategy of strategies) {
    const trial = withStrategy(values, strategy);
    const outcome = run(trial, strategy.name, values.quiet ? undefined : printEvent(io, values.json));
    results.push(outcome.strategyResult);
    const summary = values.json
      ? JSON.stringify({
          source: "summary",
          strategy: strategy.name,
          ...clientReport(outcome.result.totals, 0, outcome.config.durationMs),
          metrics: outcome.metrics,
        })
      : formatClientSummary(outcome.result.totals);
    io.stdout.write(`${summary}\n`);
    io.stderr.write(
      `sim: ${strategy.name}: ${outcome.result.events} events in ${(outcome.wallMs / 1000).toFixed(2)} s ` +
        `(${(((outcome.result.events / outcome.wallMs) * 1000) / 1e6).toFixed(2)} million/s)\n`,
    );
  }
  if (!values.json) io.stdout.write(`\n${comparisonTable(results)}\n`);
  return 0;
}

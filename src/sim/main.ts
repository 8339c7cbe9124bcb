import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { givenFlagNames, parseValue } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { makeOutputDir, writeOutputFile } from "../runtime/output-files.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { clientReport, formatClientLine, formatClientSummary, openLoopSuffix } from "../client/reporter.ts";
import { concurrencyForDelay } from "../model/latency.ts";
import { computeMetrics, type Phases, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/service-queue.ts";
import { comparisonTable, renderSvg, type StrategyResult } from "../scenario/report.ts";
import { parseStrategies, type StrategyRun } from "../scenario/strategies.ts";
import { summaryJson } from "../scenario/summary-file.ts";
import { presetValues } from "../strategies/presets.ts";
import { onlyParametersOf, presetOf, strategyOfRun } from "../strategies/registry.ts";
import { formatServerLine, formatServerTotals, serverReport, serverTotalsReport } from "../server/reporter.ts";
import {
  MAX_CLIENTS,
  MAX_REPORTS,
  MIN_CYCLE_MS,
  parseSimArgs,
  parseSweep,
  resolveSimOptions,
  SIM_FLAGS,
  type SimFlagValues,
} from "./options.ts";
import { retryLoadWhileDown } from "./retry-load.ts";
import { type SimulationConfig, type SimulationEvent, simulate } from "./simulate.ts";
import { sweepChart } from "./sweep-chart.ts";
import { playSimulation } from "./playback.ts";

/** The outage the metrics are computed around: the first; the run ends at `endMs`. */
function phasesOf(config: SimulationConfig, endMs = config.durationMs): Phases {
  const first = config.outages[0] ?? { atMs: config.durationMs, durationMs: 0 };
  return { stopAtMs: first.atMs, resumeAtMs: first.atMs + first.durationMs, endMs };
}

/** The simulation the flag values describe; a UsageError for values the simulator cannot run. */
export function configFrom(values: SimFlagValues): SimulationConfig {
  const options = resolveSimOptions(values);
  checkProtection(values);
  checkSimulatorBounds(values, options.server.reportIntervalMs);
  return {
    users: options.client.clients,
    arrivals: options.client.arrivals,
    protection: {
      retryAfterMs: options.server.retryAfterMs,
      deadlines: options.client.propagateDeadline && options.server.deadlineAware,
      errorRate: options.server.errorRate,
    },
    timeoutMs: options.client.timeoutMs,
    retry: options.client.retry,
    intervalMs: options.client.intervalMs,
    latency: options.server.latency,
    cancelOnDisconnect: options.server.cancelOnDisconnect,
    maxConcurrency: options.server.maxConcurrency,
    maxInService: options.server.maxInService ?? DEFAULT_MAX_IN_SERVICE,
    backlog: options.server.backlog,
    reportIntervalMs: options.server.reportIntervalMs,
    outages: options.outages,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/** A strategy to simulate, with the flag values its preset sets (none for a plain strategy). */
type SimRun = StrategyRun & { readonly presetFlags: Partial<SimFlagValues> };

/**
 * The runs of a strategy list. A preset's flags apply except those given on the command
 * line, which win, as in the demo, where -client-args come after the preset's flags.
 */
function simRuns(runs: readonly StrategyRun[], given: ReadonlySet<string>): SimRun[] {
  return runs.map((run) => {
    const preset = presetOf(run.name);
    const flags = preset === undefined ? {} : presetValues(preset, SIM_FLAGS);
    const presetFlags = Object.fromEntries(Object.entries(flags).filter(([name]) => name === "strategy" || !given.has(name)));
    return { ...run, presetFlags: presetFlags as Partial<SimFlagValues> };
  });
}

/** Limits of the simulator itself, beyond the flags' own: a run within them completes in bounded memory. */
function checkSimulatorBounds(values: SimFlagValues, reportIntervalMs: number): void {
  const reports = (intervalMs: number) => values.duration / intervalMs;
  if (values.clients > MAX_CLIENTS) {
    throw new UsageError(`invalid value "${values.clients}" for flag -clients: the simulator runs at most ${MAX_CLIENTS} clients`);
  }
  if (reports(reportIntervalMs) > MAX_REPORTS) {
    throw new UsageError(
      `invalid value "${formatDuration(reportIntervalMs)}" for flag -report-interval: more than ${MAX_REPORTS} server reports in -duration ${formatDuration(values.duration)}`,
    );
  }
  if (reports(values.interval) > MAX_REPORTS) {
    throw new UsageError(
      `invalid value "${formatDuration(values.interval)}" for flag -interval: more than ${MAX_REPORTS} client windows in -duration ${formatDuration(values.duration)}`,
    );
  }
  if (values.timeout < MIN_CYCLE_MS) {
    throw new UsageError(
      `invalid value "${formatDuration(values.timeout)}" for flag -timeout: the simulator needs at least ${MIN_CYCLE_MS}ms`,
    );
  }
  if (values.lambda * 1000 + values.baseDelay < MIN_CYCLE_MS) {
    throw new UsageError(
      `invalid value "${values.lambda}" for flag -lambda: with -baseDelay ${formatDuration(values.baseDelay)} a request cycle is under ${MIN_CYCLE_MS}ms, too short for the simulator`,
    );
  }
}

/**
 * Flag combinations that would simulate nothing: in the simulator one command line sets both
 * sides, so a client option that the server's flags make void is a mistake, not a choice.
 */
function checkProtection(values: SimFlagValues): void {
  if (values["deadline-aware"] && !values["propagate-deadline"]) {
    throw new UsageError("-deadline-aware needs -propagate-deadline: without it the clients send no deadline");
  }
  if (values["honor-retry-after"] && (values["max-concurrency"] === 0 || values["retry-after"] === 0)) {
    throw new UsageError("-honor-retry-after needs -max-concurrency and a -retry-after above 0: otherwise no answer carries a Retry-After");
  }
}

/**
 * The flag values with another strategy selected. When several strategies are compared, a
 * parameter flag applies to those that read it and is left out for the others.
 */
function withStrategy(values: SimFlagValues, strategy: SimRun): SimFlagValues {
  const base = strategyOfRun(strategy.name);
  return { ...values, ...onlyParametersOf(base, values), strategy: base, "exponential-backoff": false, ...strategy.presetFlags };
}

function selectedStrategy(values: SimFlagValues): StrategyRun {
  return parseStrategies(values["exponential-backoff"] ? "exponential-backoff" : values.strategy)[0]!;
}

/** One simulation of the flag values, with its metrics. */
export function run(values: SimFlagValues, strategy: string, onEvent?: (event: SimulationEvent) => void) {
  const config = configFrom(values);
  const started = performance.now();
  const result = simulate(config, onEvent);
  const wallMs = performance.now() - started;
  const phases = phasesOf(config, result.endMs);
  const metrics = computeMetrics(result.server, result.client, phases, config.latency.limit, { outOfMemory: result.outOfMemory });
  const strategyResult: StrategyResult = {
    strategy,
    phases,
    server: result.server,
    client: result.client,
    metrics,
    concurrencyLimit: config.latency.limit,
  };
  return { config, result, metrics, strategyResult, wallMs };
}

function printAnalysis(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[]): void {
  const config = configFrom(values);
  const tipping = concurrencyForDelay(config.latency, config.timeoutMs);
  const open = config.arrivals?.kind === "open" ? config.arrivals : undefined;
  const baselinePerSec = open?.ratePerSec ?? config.users / ((config.retry.thinkTimeMeanMs + config.latency.baseDelayMs) / 1000);
  const outageMs = config.outages[0]?.durationMs ?? 20_000;
  const offeredBy =
    open === undefined
      ? `${config.users} clients, lambda ${formatDuration(config.retry.thinkTimeMeanMs)}`
      : `open-loop arrivals, at most ${open.maxChains} alive`;
  io.stderr.write(
    `sim: the delay reaches the ${formatDuration(config.timeoutMs)} timeout at ${tipping} requests in service ` +
      `(limit ${config.latency.limit}, factor ${config.latency.factor}, k ${config.latency.exponentDivisor}, baseDelay ${formatDuration(config.latency.baseDelayMs)})\n` +
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
}

function printEvent(io: ProgramIo, json: boolean): (event: SimulationEvent) => void {
  return (event) => {
    let line: string;
    if (event.kind === "server") {
      line = json
        ? JSON.stringify({ source: "server", ...serverReport(event.atMs, event.snapshot) })
        : formatServerLine(event.atMs, event.snapshot, "utc");
    } else {
      const open = event.openLoop;
      line = json
        ? JSON.stringify({ source: "client", ...clientReport(event.report, event.inFlight, event.atMs), ...open })
        : formatClientLine(event.report, event.inFlight) + (open === undefined ? "" : openLoopSuffix(open));
    }
    io.stdout.write(`${line}\n`);
  };
}

function findCriticalOutage(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[]): void {
  const upperMs = 600_000;
  const resolutionMs = 250;
  const observeMs = values.duration - durationOfFirstOutageStart(values) - firstOutageLength(values);
  const recovers = (strategy: SimRun, outageMs: number) => {
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

async function sweep(io: ProgramIo, values: SimFlagValues, strategies: readonly SimRun[], sweepText: string): Promise<void> {
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
  const strategies = simRuns(
    values.strategies === undefined ? [selectedStrategy(values)] : parseStrategies(values.strategies),
    givenFlagNames(argv, SIM_FLAGS),
  );
  if (values.dashboard && (values["find-critical-outage"] || values.sweep !== undefined)) {
    throw new UsageError(
      `-dashboard plays back one run per strategy; it cannot be combined with ${values.sweep === undefined ? "-find-critical-outage" : "-sweep"}`,
    );
  }
  // A results directory that cannot be made fails now, not after the runs.
  if (values.out !== undefined && values.sweep === undefined && !values["find-critical-outage"]) makeOutputDir(values.out);
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
  const playback = values.dashboard ? await playSimulation(io, values) : undefined;
  for (const strategy of strategies) {
    const trial = withStrategy(values, strategy);
    const outcome = run(trial, strategy.name, values.quiet ? undefined : printEvent(io, values.json));
    results.push(outcome.strategyResult);
    await playback?.play(outcome.strategyResult, outcome.config.outages);
    const { result } = outcome;
    const { openLoop, serverTotals } = result;
    const summary = values.json
      ? JSON.stringify({
          source: "summary",
          strategy: strategy.name,
          ...clientReport(result.totals, 0, result.endMs),
          ...openLoop,
          server: serverTotalsReport(serverTotals),
          metrics: outcome.metrics,
          outOfMemory: result.outOfMemory ?? null,
          countedRequests: result.countedRequests,
        })
      : `${formatClientSummary(result.totals)}${openLoop === undefined ? "" : openLoopSuffix(openLoop)}\n` +
        `server: ${formatServerTotals(serverTotals)}`;
    io.stdout.write(`${summary}\n`);
    if (result.outOfMemory !== undefined) {
      io.stderr.write(
        `sim: ${strategy.name}: the server ran out of memory at ${formatDuration(result.outOfMemory.atMs)} with ` +
          `${result.outOfMemory.inService} requests in service (-max-in-service): a real one dies there, so the run ended there\n`,
      );
    }
    if (result.countedRequests > 0) {
      io.stderr.write(
        `sim: ${strategy.name}: ${result.countedRequests} of the requests in service at the end were counted, not stored: ` +
          "none of them could complete within the run\n",
      );
    }
    io.stderr.write(
      `sim: ${strategy.name}: ${outcome.result.events} events in ${(outcome.wallMs / 1000).toFixed(2)} s ` +
        `(${(((outcome.result.events / outcome.wallMs) * 1000) / 1e6).toFixed(2)} million/s)\n`,
    );
  }
  if (values.out !== undefined) {
    writeOutputFile(join(values.out, "summary.json"), summaryJson({ command: `sim ${argv.join(" ")}` }, results));
    io.stderr.write(`sim: wrote ${join(values.out, "summary.json")}\n`);
  }
  if (!values.json) {
    const whys = results.map((result) => `${result.strategy}: ${result.metrics.verdict}: ${result.metrics.why}`);
    io.stdout.write(`\n${comparisonTable(results)}\n\n${whys.join("\n")}\n`);
  }
  await playback?.finish();
  return 0;
}

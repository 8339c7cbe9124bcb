import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { formatClientLine, formatClientSummary, openLoopSuffix } from "../client/reporter.ts";
import { clientReport } from "../contracts/client-line-writer.ts";
import { serverLine } from "../contracts/server-line-writer.ts";
import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { Phases } from "../model/timeline.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import type { StrategyResult } from "../report/report.ts";
import type { StrategyRun } from "../strategies/runs.ts";
import { formatServerLine, formatServerTotals, serverTotalsReport } from "../server/reporter.ts";
import { presetValues } from "../strategies/presets.ts";
import { onlyParametersOf, presetOf, type StrategyName, strategyOfRun } from "../strategies/registry.ts";
import { MAX_CLIENTS, MAX_REPORTS, MIN_CYCLE_MS, resolveSimOptions, SIM_FLAGS, type SimFlagValues } from "./options.ts";
import { figuresOf, type Outage, type SimulationConfig, type SimulationEvent, simulate } from "./simulate.ts";

/*
 * One simulation from the simulator's flag values, the unit of work that -strategies,
 * -sweep and -find-critical-outage repeat. The same functions run in the main thread and
 * in worker threads, so a run's output does not depend on where it ran.
 */

/**
 * The trouble the metrics are computed around: the first outage; with a fault schedule,
 * from the start of its first fault to the end of its last, every fault (stops included)
 * in `faults`. The run ends at `endMs`.
 */
export function phasesOf(config: SimulationConfig, endMs = config.durationMs): Phases {
  const others = config.faults ?? [];
  if (others.length > 0) {
    const stops = config.outages.map((outage) => ({ kind: "stop" as const, factor: 1, ...outage }));
    const faults = [...stops, ...others].sort((a, b) => a.atMs - b.atMs);
    const stopAtMs = Math.min(...faults.map((fault) => fault.atMs));
    return { stopAtMs, resumeAtMs: Math.max(...faults.map((fault) => fault.atMs + fault.durationMs)), endMs, faults };
  }
  const first = config.outages[0] ?? { atMs: config.durationMs, durationMs: 0 };
  return { stopAtMs: first.atMs, resumeAtMs: first.atMs + first.durationMs, endMs };
}

/** The simulation the flag values describe; a UsageError for values the simulator cannot run. */
export function configFrom(values: SimFlagValues): SimulationConfig {
  // With -strategies a parameter flag is for the strategies that read it (withStrategy); the base
  // strategy's configuration, read for the system and its faults, must not refuse it.
  const base = (values["exponential-backoff"] ? "exponential-backoff" : values.strategy) as StrategyName; // a choice of the flag table
  const options = resolveSimOptions(values.strategies === undefined ? values : { ...values, ...onlyParametersOf(base, values) });
  checkProtection(values);
  checkSimulatorBounds(values, options.server.reportIntervalMs);
  return {
    users: options.client.clients,
    arrivals: options.client.arrivals,
    protection: {
      retryAfterMs: options.server.retryAfterMs,
      deadlines: options.client.propagateDeadline && options.server.deadlineAware,
      errorRate: options.server.errorRate,
      dropShed: options.server.shedWith === "drop",
    },
    timeoutMs: options.client.timeoutMs,
    retry: options.client.retry,
    intervalMs: options.client.intervalMs,
    latency: options.server.latency,
    model: options.server.model,
    cancelOnDisconnect: options.server.cancelOnDisconnect,
    maxConcurrency: options.server.maxConcurrency,
    maxInService: options.server.maxInService ?? DEFAULT_MAX_IN_SERVICE,
    backlog: options.server.backlog,
    reportIntervalMs: options.server.reportIntervalMs,
    outages: options.outages,
    faults: options.faults,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/** Limits of the simulator itself, beyond the flags' own: a run within them completes in bounded memory. */
export function checkSimulatorBounds(values: SimFlagValues, reportIntervalMs: number): void {
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
  const sheds = values["max-concurrency"] !== 0 || (values["queue-limit"] ?? 0) !== 0;
  if (values["honor-retry-after"] && (!sheds || values["retry-after"] === 0)) {
    throw new UsageError(
      "-honor-retry-after needs -max-concurrency (or -queue-limit) and a -retry-after above 0: otherwise no answer carries a Retry-After",
    );
  }
}

/** A strategy to simulate, with the flag values its preset sets (none for a plain strategy). */
export type SimRun = StrategyRun & { readonly presetFlags: Partial<SimFlagValues> };

/**
 * The runs of a strategy list. A preset's flags apply except those given on the command
 * line, which win, as in the demo, where -client-args come after the preset's flags.
 */
export function simRuns(runs: readonly StrategyRun[], given: ReadonlySet<string>): SimRun[] {
  return runs.map((run) => {
    const preset = presetOf(run.name);
    const flags = preset === undefined ? {} : presetValues(preset, SIM_FLAGS);
    const presetFlags = Object.fromEntries(Object.entries(flags).filter(([name]) => name === "strategy" || !given.has(name)));
    return { ...run, presetFlags: presetFlags as Partial<SimFlagValues> };
  });
}

/**
 * The flag values with another strategy selected. When several strategies are compared, a
 * parameter flag applies to those that read it and is left out for the others.
 */
export function withStrategy(values: SimFlagValues, strategy: SimRun): SimFlagValues {
  const base = strategyOfRun(strategy.name);
  return { ...values, ...onlyParametersOf(base, values), strategy: base, "exponential-backoff": false, ...strategy.presetFlags };
}

/** One simulation of the flag values, with its metrics. */
export function runTrial(values: SimFlagValues, strategy: string, onEvent?: (event: SimulationEvent) => void) {
  const config = configFrom(values);
  const started = performance.now();
  const result = simulate(config, onEvent);
  const wallMs = performance.now() - started;
  const phases = phasesOf(config, result.endMs);
  // The verdict's line: the exponential model's limit, or where another model is over its tipping point.
  const overloadAbove = figuresOf(config).overloadAbove;
  const metrics = computeMetrics(result.server, result.client, phases, overloadAbove, { outOfMemory: result.outOfMemory });
  const strategyResult: StrategyResult = {
    strategy,
    phases,
    server: result.server,
    client: result.client,
    metrics,
    concurrencyLimit: overloadAbove,
  };
  return { config, result, metrics, strategyResult, wallMs };
}

/** The scenario metrics of one trial: what sweeps and bisections compare. */
export function trialMetrics(values: SimFlagValues): ScenarioMetrics {
  return runTrial(values, values.strategy).metrics;
}

function eventLine(event: SimulationEvent, json: boolean): string {
  if (event.kind === "server") {
    return json
      ? JSON.stringify({ source: "server", ...serverLine(event.atMs, event.snapshot) })
      : formatServerLine(event.atMs, event.snapshot, "utc");
  }
  const open = event.openLoop;
  return json
    ? JSON.stringify({ source: "client", ...clientReport(event.report, event.inFlight, event.atMs, open) })
    : formatClientLine(event.report, event.inFlight) + (open === undefined ? "" : openLoopSuffix(open));
}

export interface StrategyRunOutput {
  readonly strategyResult: StrategyResult;
  /** The run's outages, for the dashboard's playback. */
  readonly outages: readonly Outage[];
  /** The lines for stderr: what ended the run early or went uncounted, then events and speed. */
  readonly stderr: string;
}

/**
 * One strategy's run as the simulator prints it: every report line (unless quiet), then
 * its summary, written to `write` as they come.
 */
export function runStrategy(values: SimFlagValues, strategy: SimRun, write: (text: string) => void): StrategyRunOutput {
  const trial = withStrategy(values, strategy);
  const json = values.json;
  const outcome = runTrial(trial, strategy.name, values.quiet ? undefined : (event) => write(`${eventLine(event, json)}\n`));
  const { result } = outcome;
  const { openLoop, serverTotals } = result;
  const summary = json
    ? JSON.stringify({
        source: "summary",
        strategy: strategy.name,
        ...clientReport(result.totals, 0, result.endMs, openLoop),
        server: serverTotalsReport(serverTotals),
        metrics: outcome.metrics,
        outOfMemory: result.outOfMemory ?? null,
        countedRequests: result.countedRequests,
      })
    : `${formatClientSummary(result.totals)}${openLoop === undefined ? "" : openLoopSuffix(openLoop)}\n` +
      `server: ${formatServerTotals(serverTotals)}`;
  write(`${summary}\n`);
  let stderr = "";
  if (result.outOfMemory !== undefined) {
    stderr +=
      `sim: ${strategy.name}: the server ran out of memory at ${formatDuration(result.outOfMemory.atMs)} with ` +
      `${result.outOfMemory.inService} requests in service (-max-in-service): a real one dies there, so the run ended there\n`;
  }
  if (result.countedRequests > 0) {
    stderr +=
      `sim: ${strategy.name}: ${result.countedRequests} of the requests in service at the end were counted, not stored: ` +
      "none of them could complete within the run\n";
  }
  stderr +=
    `sim: ${strategy.name}: ${result.events} events in ${(outcome.wallMs / 1000).toFixed(2)} s ` +
    `(${(((result.events / outcome.wallMs) * 1000) / 1e6).toFixed(2)} million/s)\n`;
  return { strategyResult: outcome.strategyResult, outages: outcome.config.outages, stderr };
}

import { UsageError } from "../cli/usage-error.ts";
import { clientReport, formatClientLine, formatClientSummary } from "../client/reporter.ts";
import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { StrategyResult } from "../scenario/report.ts";
import type { StrategyRun } from "../scenario/strategies.ts";
import { onlyParametersOf } from "../strategies/registry.ts";
import { formatServerLine, serverReport } from "../server/reporter.ts";
import { resolveSimOptions, type SimFlagValues } from "./options.ts";
import { type SimulationConfig, type SimulationEvent, simulate } from "./simulate.ts";

/*
 * One simulation from the simulator's flag values, the unit of work that -strategies,
 * -sweep and -find-critical-outage repeat. The same functions run in the main thread and
 * in worker threads, so a run's output does not depend on where it ran.
 */

/** The outage the metrics are computed around: the first. */
export function phasesOf(config: SimulationConfig) {
  const first = config.outages[0] ?? { atMs: config.durationMs, durationMs: 0 };
  return { stopAtMs: first.atMs, resumeAtMs: first.atMs + first.durationMs, endMs: config.durationMs };
}

export function configFrom(values: SimFlagValues): SimulationConfig {
  let options;
  try {
    options = resolveSimOptions(values);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
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

/**
 * The flag values with another strategy selected. When several strategies are compared, a
 * parameter flag applies to those that read it and is left out for the others.
 */
export function withStrategy(values: SimFlagValues, strategy: StrategyRun): SimFlagValues {
  return { ...values, ...onlyParametersOf(strategy.name, values), strategy: strategy.name, "exponential-backoff": false };
}

export function runTrial(values: SimFlagValues, strategy: string, onEvent?: (event: SimulationEvent) => void) {
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

/** The scenario metrics of one trial: what sweeps and bisections compare. */
export function trialMetrics(values: SimFlagValues): ScenarioMetrics {
  return runTrial(values, values.strategy).metrics;
}

function eventLine(event: SimulationEvent, json: boolean): string {
  if (event.kind === "server") {
    return json
      ? JSON.stringify({ source: "server", ...serverReport(event.atMs, event.snapshot) })
      : formatServerLine(event.atMs, event.snapshot, "utc");
  }
  return json
    ? JSON.stringify({ source: "client", ...clientReport(event.report, event.inFlight, event.atMs) })
    : formatClientLine(event.report, event.inFlight);
}

export interface StrategyRunOutput {
  readonly strategyResult: StrategyResult;
  /** The line for stderr: events and speed. */
  readonly speedLine: string;
}

/**
 * One strategy's run as the simulator prints it: every report line (unless quiet), then
 * its summary, written to `write` as they come.
 */
export function runStrategy(values: SimFlagValues, strategy: StrategyRun, write: (text: string) => void): StrategyRunOutput {
  const trial = withStrategy(values, strategy);
  const json = values.json;
  const outcome = runTrial(trial, strategy.name, values.quiet ? undefined : (event) => write(`${eventLine(event, json)}\n`));
  const summary = json
    ? JSON.stringify({
        source: "summary",
        strategy: strategy.name,
        ...clientReport(outcome.result.totals, 0, outcome.config.durationMs),
        metrics: outcome.metrics,
      })
    : formatClientSummary(outcome.result.totals);
  write(`${summary}\n`);
  return {
    strategyResult: outcome.strategyResult,
    speedLine:
      `sim: ${strategy.name}: ${outcome.result.events} events in ${(outcome.wallMs / 1000).toFixed(2)} s ` +
      `(${(((outcome.result.events / outcome.wallMs) * 1000) / 1e6).toFixed(2)} million/s)\n`,
  };
}

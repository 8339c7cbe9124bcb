import { formatDuration } from "../cli/duration.ts";
import { formatClientLine, formatClientSummary, openLoopSuffix } from "../contracts/client-text.ts";
import { clientReport } from "../contracts/client-line-writer.ts";
import { serverLine } from "../contracts/server-line-writer.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { StrategyResult } from "../report/report.ts";
import type { StrategyRun } from "../strategies/runs.ts";
import { formatServerLine, formatServerTotals, serverTotalsReport } from "../contracts/server-text.ts";
import { presetValues } from "../strategies/presets.ts";
import { onlyParametersOf, presetOf, strategyOfRun } from "../strategies/registry.ts";
import { configFrom, SIM_FLAGS, type SimFlagValues } from "../options/sim.ts";
import type { SimulationEvent } from "../runner/simulate.ts";
import type { Outage } from "../config/simulation-config.ts";
import { runSimulation } from "../runner/trial.ts";

/*
 * One simulation from the simulator's flag values, the unit of work that -strategies,
 * -sweep and -find-critical-outage repeat, and its lines as ./sim prints them. The same
 * functions run in the main thread and in worker threads, so a run's output does not depend
 * on where it ran.
 */

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
  return runSimulation(configFrom(values), strategy, onEvent);
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

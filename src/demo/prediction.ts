import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { StrategyResult } from "../report/report.ts";
import { runSimulation } from "../runner/trial.ts";
import { parseSimulationArgs, simulationConfigFrom } from "../config/simulation.ts";
import type { StrategyRun } from "../strategies/runs.ts";

/** What a demo run is, as the simulator reads it. */
export interface PredictedRun {
  /** The server model's flags: the scenario file's system section and -server-args. */
  readonly serverArgs: readonly string[];
  /** The users' flags of this strategy's run, the strategy's own included. */
  readonly clientArgs: readonly string[];
  readonly steadyMs: number;
  readonly outageMs: number;
  readonly observeMs: number;
  /** The -faults schedule as given; undefined for the one stop. */
  readonly faults: string | undefined;
  /** Ms from the steady state's start to the end of the last fault. */
  readonly troubleMs: number;
  readonly seed: number;
}

/**
 * The simulator's run of the same scenario as a real one (demo -target): the model its server
 * flags give, the same users, strategy, faults, phases and seed, on the virtual clock, judged as
 * the real run is (its server read as a watcher reads the service). Its result,
 * or why the simulator cannot run it (a client flag it does not take): a prediction beside the
 * real run, never in its place.
 */
export function predicted(run: PredictedRun, strategy: StrategyRun): { readonly result: StrategyResult } | { readonly why: string } {
  const trouble =
    run.faults === undefined
      ? ["-outage-at", formatDuration(run.steadyMs), "-outage", formatDuration(run.outageMs)]
      : ["-faults", run.faults];
  // The run's seed first: a -seed among the users' flags is theirs, and wins as it does for ./client.
  const args = [
    "-seed",
    String(run.seed),
    ...run.serverArgs,
    ...run.clientArgs,
    ...trouble,
    "-duration",
    formatDuration(run.troubleMs + run.observeMs),
  ];
  let config: SimulationConfig;
  try {
    const parsed = parseSimulationArgs(args);
    if (parsed.kind !== "run") return { why: "no simulation asked for" };
    config = simulationConfigFrom(parsed.values);
  } catch (error) {
    // Flags the simulator does not take are said; anything else is a failure of the demo's own.
    if (error instanceof UsageError) return { why: error.message };
    throw error;
  }
  // Judged as the real run is: its "server back" is a watcher's (src/model/verdict.ts readAsWatcher).
  return { result: runSimulation(config, strategy.name, undefined, { readAsWatcher: true }).strategyResult };
}

/** A prediction in a line, for the terminal: its verdict and recovery times. */
export function predictionLine(strategy: string, metrics: ScenarioMetrics): string {
  const time = (ms: number | undefined) => (ms === undefined ? "never" : formatDuration(ms));
  return (
    `demo: ${strategy}: the simulator predicts ${metrics.verdict} for the same scenario ` +
    `(server back ${time(metrics.serverRecoveryMs)}, clients back ${time(metrics.clientRecoveryMs)})`
  );
}

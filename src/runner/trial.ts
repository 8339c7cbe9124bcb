import { computeMetrics, type ServerEvents } from "../model/scenario-metrics.ts";
import type { Phases } from "../model/timeline.ts";
import type { StrategyResult } from "../report/report.ts";
import { figuresOf, type SimulationEvent, simulate } from "./simulate.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";

/*
 * One simulation of a configuration on the virtual clock, judged: its result, its metrics and
 * the strategy's result the reports draw. The simulator runs it for each of its runs, from its
 * flags (src/sim/trial.ts), in the main thread and in worker threads alike.
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

/** One simulation of the configuration, with its metrics, as `strategy`'s result; `wallMs` is the simulation's own time. */
export function runSimulation(
  config: SimulationConfig,
  strategy: string,
  onEvent?: (event: SimulationEvent) => void,
  /** How the run is judged besides: a prediction beside a watched service reads its reports as the watcher would (src/model/verdict.ts). */
  judged: Pick<ServerEvents, "readAsWatcher"> = {},
) {
  const started = performance.now();
  const result = simulate(config, onEvent);
  const wallMs = performance.now() - started;
  const phases = phasesOf(config, result.endMs);
  // The verdict's line: the exponential model's limit, or where another model is over its tipping point.
  const overloadAbove = figuresOf(config).overloadAbove;
  const metrics = computeMetrics(result.server, result.client, phases, overloadAbove, { outOfMemory: result.outOfMemory, ...judged });
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

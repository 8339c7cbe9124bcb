import { resolve } from "node:path";
import { givenFlagNames } from "../../src/cli/flags.ts";
import type { ClientWindow } from "../../src/model/timeline.ts";
import type { Counts } from "../../src/model/window-stats.ts";
import type { ScenarioMetrics } from "../../src/model/scenario-metrics.ts";
import { parseSimArgs, resolveSimOptions, SIM_FLAGS } from "../../src/sim/options.ts";
import { runTrial, simRuns, withStrategy } from "../../src/sim/trial.ts";
import { parseStrategies } from "../../src/strategies/runs.ts";
import { exampleArgs, type ExampleFile, readExampleFile } from "../../scripts/scenario-shim.ts";

/*
 * Runs an example of examples/ in the simulator, in this process: the file's flags, then
 * `overrides`, read by the simulator's own parser, one run per strategy of its -strategies
 * (or its one -strategy), as `./sim FILE` would.
 */

export const EXAMPLES_DIR = resolve(import.meta.dirname, "../../examples");

export interface StrategyOutcome {
  readonly strategy: string;
  readonly counts: Counts;
  /** Requests that ended: succeeded or given up. */
  readonly requests: number;
  /** Of the OK attempts over the whole run. */
  readonly latency: { readonly p50Ms: number; readonly p99Ms: number } | undefined;
  readonly metrics: ScenarioMetrics;
  /** Per reporting window. */
  readonly windows: readonly ClientWindow[];
  readonly seed: number;
}

export function loadExample(file: string): ExampleFile {
  return readExampleFile(resolve(EXAMPLES_DIR, file));
}

export function runExample(file: string, overrides: Readonly<Record<string, string | null>> = {}): StrategyOutcome[] {
  const argv = exampleArgs(loadExample(file), overrides);
  const parsed = parseSimArgs(argv);
  if (parsed.kind !== "run") throw new Error(`${file}: not a run`);
  const values = parsed.values;
  // What ./sim refuses before it runs anything (a parameter flag its -strategy does not read, ...), refused here too.
  resolveSimOptions(values);
  const list = values.strategies ?? (values["exponential-backoff"] ? "exponential-backoff" : values.strategy);
  return simRuns(parseStrategies(list), givenFlagNames(argv, SIM_FLAGS)).map((run) => {
    const { result, metrics } = runTrial(withStrategy(values, run), run.name);
    const counts = result.totals.counts;
    return {
      strategy: run.name,
      counts,
      requests: counts.ok + counts.gaveUp,
      latency: result.totals.latency,
      metrics,
      windows: result.client,
      seed: values.seed,
    };
  });
}

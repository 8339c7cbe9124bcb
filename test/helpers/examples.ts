import { resolve } from "node:path";
import { givenFlagNames, parseFlags } from "../../src/cli/flags.ts";
import type { Workload } from "../../src/cli/workload.ts";
import type { ClientWindow, ServerSample } from "../../src/model/timeline.ts";
import type { Counts } from "../../src/model/window-stats.ts";
import type { ScenarioMetrics } from "../../src/model/scenario-metrics.ts";
import { readScenarioFile } from "../../src/scenario-file/read.ts";
import { type OccSimFigures, simulateOcc } from "../../src/runner/occ.ts";
import { OCC_SIM_PROGRAM, OCC_SIM_TARGET, occRun } from "../../src/options/occ.ts";
import { parseSimArgs, resolveSimOptions, SIM_FLAGS, SIM_TARGET } from "../../src/options/sim.ts";
import { runTrial, simRuns, withStrategy } from "../../src/sim/trial.ts";
import { parseStrategies } from "../../src/strategies/runs.ts";
import { demo, readSummary, reportDir } from "./demo-experiment.ts";
import { temporaryDir } from "./temporary-dirs.ts";

/*
 * Runs an example of examples/ in the simulator, in this process, as `./sim FILE -flag value`
 * does: the file read by the scenario-file reader, its flags first, then `overrides`, through
 * the simulator's own parser and checks; one run per strategy of its -strategies (or its one
 * -strategy). An example of workload occ runs as `./sim -workload occ` does (runOccExample).
 */

export const EXAMPLES_DIR = resolve(import.meta.dirname, "../../examples");

export interface ExampleFile {
  readonly name: string;
  readonly source: { readonly title: string; readonly url: string };
  readonly published: string;
  /** The file's flags as `-name=value` tokens. */
  readonly tokens: readonly string[];
  readonly workload: Workload;
}

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
  /** The server's reports, one per -report-interval. */
  readonly server: readonly ServerSample[];
  readonly seed: number;
}

/** An example's metadata and flags; an example without its name, source or published outcome is refused. */
export async function loadExample(file: string): Promise<ExampleFile> {
  const scenario = await readScenarioFile(resolve(EXAMPLES_DIR, file), [SIM_TARGET, OCC_SIM_TARGET]);
  const { name, source, published } = scenario.metadata;
  if (name === undefined || source?.title === undefined || source.url === undefined || published === undefined) {
    throw new Error(`${file}: an example names itself, its source (title and url) and its published outcome`);
  }
  return {
    name,
    source: { title: source.title, url: source.url },
    published: published.trim(),
    tokens: scenario.tokens,
    workload: scenario.workload,
  };
}

/** The example's flags with `overrides` after them, as flags beside a file; an override of `null` takes the file's flag away. */
export function exampleArgs(example: ExampleFile, overrides: Readonly<Record<string, string | null>> = {}): string[] {
  const kept = example.tokens.filter((token) => !(token.slice(1, token.indexOf("=")) in overrides));
  return [...kept, ...Object.entries(overrides).flatMap(([name, value]) => (value === null ? [] : [`-${name}=${value}`]))];
}

/** The example's flags, refused unless it is of the workload the caller runs. */
async function exampleOf(file: string, workload: Workload, overrides: Readonly<Record<string, string | null>>): Promise<string[]> {
  const example = await loadExample(file);
  if (example.workload !== workload) throw new Error(`${file}: of workload ${example.workload}, not ${workload}`);
  return exampleArgs(example, overrides);
}

/** An example of workload occ: its figures per strategy (and client count), as `./sim FILE` prints them. */
export async function runOccExample(file: string, overrides: Readonly<Record<string, string | null>> = {}): Promise<OccSimFigures[]> {
  const parsed = parseFlags(OCC_SIM_PROGRAM, await exampleOf(file, "occ", overrides));
  if (parsed.kind !== "run") throw new Error(`${file}: not a run`);
  return simulateOcc(occRun(parsed.values));
}

export async function runExample(file: string, overrides: Readonly<Record<string, string | null>> = {}): Promise<StrategyOutcome[]> {
  const argv = await exampleOf(file, "requests", overrides);
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
      server: result.server,
      seed: values.seed,
    };
  });
}

/**
 * An example on the real ./server and ./client: `npm run demo -- FILE ...flags` (a flag beside
 * the file wins over it), stopped by its pid if the test ends first; the verdict per strategy
 * from the run's summary.json. Under `prefix` where given (demo's).
 */
export async function runExampleReal(file: string, flags: readonly string[], prefix: readonly string[] = []): Promise<Map<string, string>> {
  const run = demo([resolve(EXAMPLES_DIR, file), ...flags, "-out", temporaryDir("thundering-herd-example-")], prefix);
  const code = await run.exited;
  if (code !== 0) throw new Error(`${file} on the real programs: the demo exited ${code}: ${run.stderrLines.slice(-3).join(" | ")}`);
  return new Map(readSummary(reportDir(run)).results.map((result) => [result.strategy, result.metrics.verdict]));
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { type SpawnedCli, spawnCli } from "./spawn-cli.ts";

/**
 * The crash experiment scaled down with the model in mind: 200 clients at lambda 2 s offer
 * the same ~100 req/s as the real demo, and a 400 ms timeout keeps fixed retry's outage load
 * at ~4x, so six seconds of outage queue ~2 000 requests, far past the ~460 in service at
 * which the delay reaches the timeout. Each test pins its seed (-seed).
 */
export const SCALED_CLIENT = ["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"];

/** The demo's phases, in seconds. */
export interface Phases {
  readonly steadyS: number;
  readonly outageS: number;
  readonly observeS: number;
}

export const phaseFlags = ({ steadyS, outageS, observeS }: Phases): string[] => [
  ...["-steady", `${steadyS}s`, "-outage", `${outageS}s`, "-observe", `${observeS}s`],
];

/**
 * `npm run demo` with these flags, as a process; under `prefix` (a command and its flags, e.g.
 * REALTIME_PREFIX) where one is given, still stopped by its own process group.
 */
export const demo = (args: readonly string[], prefix: readonly string[] = []): SpawnedCli => {
  const [command, ...rest] = [...prefix, process.execPath, "--import", "./src/register-tsx.mjs", "src/bin/demo.ts", ...args];
  return spawnCli("demo", rest, { command: command! });
};

export interface Metrics {
  verdict: string;
  peakConcurrencyAfterResume: number;
  serverRecoveryMs: number | null;
  clientRecoveryMs: number | null;
  outageAmplification: number;
  baselineOkPerSec: number;
}

export interface Summary {
  results: { strategy: string; metrics: Metrics }[];
}

/** The results directory a finished demo run printed ("report: <dir>/report.html"). */
export const reportDir = (run: SpawnedCli): string =>
  run.stdoutLines
    .find((line) => line.startsWith("report: "))!
    .replace("report: ", "")
    .replace(/\/report\.html$/, "");

/** The summary.json a finished demo run wrote. */
export const readSummary = (dir: string): Summary => JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as Summary;

/** The simulator on the same scenario: its metrics per strategy, from its JSON summaries. */
export async function simulated(
  strategies: string,
  phases: Phases,
  extraClientArgs: readonly string[] = [],
): Promise<Map<string, Metrics>> {
  const sim = spawnCli("sim", [
    ...["-strategies", strategies, ...SCALED_CLIENT, ...extraClientArgs],
    ...["-outage-at", `${phases.steadyS}s`, "-outage", `${phases.outageS}s`],
    ...["-duration", `${phases.steadyS + phases.outageS + phases.observeS}s`, "-json", "-quiet"],
  ]);
  expect(await sim.exited).toBe(0);
  const summaries = sim.stdoutLines
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { strategy: string; metrics: Metrics });
  return new Map(summaries.map((summary) => [summary.strategy, summary.metrics]));
}

/** Simulated peak concurrency after the resume within ±30 % of what the real programs did. */
export function expectPeakAgrees(simulatedMetrics: Metrics, measured: Metrics, what: string): void {
  const ratio = simulatedMetrics.peakConcurrencyAfterResume / measured.peakConcurrencyAfterResume;
  const both = `${what}: simulated ${JSON.stringify(simulatedMetrics)}, measured ${JSON.stringify(measured)}`;
  expect(ratio, both).toBeGreaterThan(0.7);
  expect(ratio, both).toBeLessThan(1.3);
}

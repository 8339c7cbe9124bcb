import { markdownTable } from "./text-table.ts";

/**
 * docs/simulator.md's "Any system, any trouble" table, from docs/sim-faults.json (written by
 * scripts/sim-faults.ts): one row per server model and fault, each strategy's verdict and
 * the most requests in the server after the trouble.
 */
export interface FaultRunRecord {
  readonly model: string;
  readonly fault: string;
  readonly command: string;
  readonly strategies: readonly { readonly strategy: string; readonly verdict: string; readonly peakConcurrency: number }[];
}

export interface FaultsFile {
  readonly runs: readonly FaultRunRecord[];
}

/** The header, then one row of cells per model and fault. */
export function faultsCells(text: string): string[][] {
  const { runs } = JSON.parse(text) as FaultsFile;
  const strategies = runs[0]?.strategies.map((entry) => entry.strategy) ?? [];
  const header = ["model", "fault", ...strategies.flatMap((strategy) => [`${strategy}: verdict`, "peak in server"])];
  const rows = runs.map((run) => [
    run.model,
    `\`${run.fault}\``,
    ...run.strategies.flatMap((entry) => [entry.verdict, entry.peakConcurrency.toLocaleString("en")]),
  ]);
  return [header, ...rows];
}

/** The same table in Markdown. */
export function markdownFaults(text: string): string {
  return markdownTable(faultsCells(text));
}

import type { StrategyResult } from "./report.ts";

/** What summary.json holds for each strategy: enough to rebuild the comparison table. */
export type SummaryEntry = Pick<StrategyResult, "strategy" | "phases" | "metrics">;

export interface SummaryFile {
  /** How the results were made: the demo's settings, or the simulator's command line. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly results: readonly SummaryEntry[];
}

/**
 * summary.json, as the demo and the simulator write it. JSON has no Infinity: an unbounded
 * delay is written as "Infinity"; a time that never came ("never recovered") as null.
 */
export function summaryJson(settings: SummaryFile["settings"], results: readonly StrategyResult[]): string {
  const entries = results.map(({ strategy, phases, metrics }) => ({ strategy, phases, metrics }));
  return `${JSON.stringify({ settings, results: entries }, jsonNumbers, 2)}\n`;
}

function jsonNumbers(_key: string, value: unknown): unknown {
  if (value === undefined) return null;
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

/** Reads a summary.json back: infinite numbers restored, null (never) as absent. */
export function parseSummary(text: string): SummaryFile {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value === null) return undefined;
    return value === "Infinity" ? Infinity : value === "-Infinity" ? -Infinity : value === "NaN" ? Number.NaN : value;
  }) as SummaryFile;
}

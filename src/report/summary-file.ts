import type { ScenarioSource } from "./html.ts";
import type { StrategyResult } from "./report.ts";
import type { ChainFigures } from "../model/tiers/chain-figures.ts";

/** What summary.json holds for each strategy: enough to rebuild the comparison table. */
export type SummaryEntry = Pick<StrategyResult, "strategy" | "phases" | "metrics"> & {
  /** A chain of tiers only: each tier's figures, the edge first, and the tier that collapsed first (null: none). */
  readonly users?: ChainFigures["users"];
  readonly tiers?: ChainFigures["tiers"];
  readonly firstCollapsed?: string | null;
  /** The same in words, with why (firstCollapsedText of src/report/tier-table.ts). */
  readonly firstCollapsedText?: string;
};

/**
 * Where a results file came from, so that a figure quoted from it can be traced: the code
 * (the git commit of the checkout it ran from, "+dirty" with uncommitted changes, or the
 * package's version when installed), the machine and Node, and when. Seeds are in the settings.
 */
export interface Provenance {
  readonly commit: string;
  readonly version: string;
  readonly machine: string;
  readonly node: string;
  readonly date: string;
}

export interface SummaryFile {
  /** How the results were made: the demo's settings, or the simulator's command line; the seeds either way. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Absent from files written before it was recorded. */
  readonly provenance?: Provenance | undefined;
  readonly results: readonly SummaryEntry[];
}

/**
 * summary.json, as the demo and the simulator write it. JSON has no Infinity: an unbounded
 * delay is written as "Infinity"; a time that never came ("never recovered") as null.
 */
export function summaryJson(settings: SummaryFile["settings"], provenance: Provenance, results: readonly StrategyResult[]): string {
  const entries = results.map(({ strategy, phases, metrics, chain }) => ({
    strategy,
    phases,
    metrics,
    ...(chain === undefined
      ? {}
      : { users: chain.users, tiers: chain.tiers, firstCollapsed: chain.firstCollapsed, firstCollapsedText: chain.firstCollapsedText }),
  }));
  return `${JSON.stringify({ settings, provenance, results: entries }, jsonNumbers, 2)}\n`;
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

/** The settings entry that embeds the scenario file a run read: its path as given, and its text. */
export function scenarioSettings(scenario: ScenarioSource | undefined): { scenario?: ScenarioSource } {
  return scenario === undefined ? {} : { scenario: { file: scenario.file, text: scenario.text } };
}

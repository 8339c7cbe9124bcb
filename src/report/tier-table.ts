import { formatDuration } from "../cli/duration.ts";
import { type Fault, formatFault } from "../model/faults/fault-schedule.ts";
import type { TierFigures } from "../model/tiers/tier-figures.ts";
import { textTable, markdownTable } from "./text-table.ts";

/*
 * A chain's figures per tier as a table (docs/tiers.md), the same for the simulator's chain
 * and the demo's real one, in the terminal and in the report.
 */

export const TIER_HEADER = [
  "tier",
  "arrivals",
  "amplification",
  "in faults",
  "from policy",
  "normal/s",
  "peak/s",
  "peak load",
  "goodput/s",
  "for nobody",
  "verdict",
  "collapsed",
  "back",
] as const;

const fixed = (value: number | null, digits: number) => (value === null ? "-" : value.toFixed(digits));
const at = (ms: number | null) => (ms === null ? "-" : formatDuration(ms));

/** One row per tier, the edge first, in TIER_HEADER's columns. */
export function tierRows(tiers: readonly TierFigures[]): string[][] {
  return tiers.map((tier) => [
    tier.name,
    String(tier.arrivals),
    `${tier.amplification.toFixed(2)}x`,
    tier.faultAmplification === null ? "-" : `${tier.faultAmplification.toFixed(2)}x`,
    tier.policyAmplification === null ? "no limit" : `${tier.policyAmplification}x`,
    fixed(tier.normalArrivalsPerSec, 1),
    tier.peakArrivalsPerSec.toFixed(1),
    tier.peakLoad === null ? "-" : `${tier.peakLoad.toFixed(2)}x`,
    tier.goodputPerSec.toFixed(1),
    String(tier.workForNobody),
    tier.verdict,
    at(tier.collapsedAtMs),
    at(tier.recoveredAtMs),
  ]);
}

/** Which tier collapsed first and why: a fault of its own before it collapsed, or its load against normal. */
export function firstCollapsedText(first: TierFigures | undefined, faultsOf: (tier: string) => readonly Fault[]): string {
  if (first === undefined) return "no tier collapsed (goodput never fell below half its normal)";
  const own = faultsOf(first.name).filter((fault) => fault.atMs < first.collapsedAtMs!);
  const why =
    own.length > 0
      ? `its own fault ${own.map((fault) => formatFault(fault, formatDuration)).join(", ")}`
      : `its load, ${fixed(first.peakLoad, 2)}x normal at the peak`;
  return `first to collapse: ${first.name} at ${at(first.collapsedAtMs)} (goodput below half its normal), by ${why}`;
}

/** Window by window, each tier's arrivals and OK answers per second (`edge in/s`, `edge OK/s`, …), for the terminal. */
export function tierWindowText(chain: {
  readonly tiers: readonly { readonly name: string }[];
  readonly windows: readonly {
    readonly endMs: number;
    readonly tiers: readonly { readonly arrivalsPerSec: number; readonly okPerSec: number }[];
  }[];
}): string {
  const header = ["window to", ...chain.tiers.flatMap((tier) => [`${tier.name} in/s`, `${tier.name} OK/s`])];
  const rows = chain.windows.map((window) => [
    formatDuration(window.endMs),
    ...window.tiers.flatMap((tier) => [tier.arrivalsPerSec.toFixed(1), tier.okPerSec.toFixed(1)]),
  ]);
  return `${textTable([header, ...rows])}\n`;
}

/** The users' line, the table and the line on the first collapse (firstCollapsedText), for the terminal. */
export function tierText(chain: {
  readonly users: { readonly requests: number; readonly ok: number; readonly gaveUp: number; readonly attempts: number };
  readonly tiers: readonly TierFigures[];
  readonly firstCollapsedText: string;
}): string {
  const { users } = chain;
  return (
    `users: ${users.requests} requests, ${users.ok} OK, ${users.gaveUp} given up, ${users.attempts} attempts\n` +
    `${textTable([[...TIER_HEADER], ...tierRows(chain.tiers)])}\n\n${chain.firstCollapsedText}\n`
  );
}

/** The README's chain table: per tier, the simulated chain beside the real one. */
export const TIER_COMPARISON_HEADER = [
  "tier",
  "from policy",
  "in faults (sim)",
  "in faults (real)",
  "peak load (sim)",
  "peak load (real)",
  "verdict (sim)",
  "verdict (real)",
] as const;

/**
 * One row per tier, the edge first: the attempts per user request that the policies allow, and
 * for the simulated and the real chain the attempts per user request while the faults lasted,
 * the peak load against normal and the verdict.
 */
export function tierComparisonRows(simulated: readonly TierFigures[], real: readonly TierFigures[]): string[][] {
  const times = (value: number | null) => (value === null ? "-" : `${value.toFixed(2)}x`);
  return simulated.map((tier, index) => {
    const measured = real[index];
    if (measured === undefined || measured.name !== tier.name) throw new Error(`tier ${tier.name}: not in the real chain at ${index}`);
    return [
      tier.name,
      tier.policyAmplification === null ? "no limit" : `${tier.policyAmplification}x`,
      times(tier.faultAmplification),
      times(measured.faultAmplification),
      times(tier.peakLoad),
      times(measured.peakLoad),
      tier.verdict,
      measured.verdict,
    ];
  });
}

/** What scripts/three-tiers.ts records (docs/three-tiers.json), as far as the README's table reads it. */
export interface ChainComparisonFile {
  readonly sim: { readonly tiers: readonly TierFigures[] };
  readonly demo: { readonly result: { readonly tiers: readonly TierFigures[] } };
  readonly choose: { readonly recommendation: { readonly headline: string } };
}

/** The header, then one row of cells per tier, from the results file's text. */
export function chainComparisonCells(fileText: string): string[][] {
  const record = JSON.parse(fileText) as ChainComparisonFile;
  return [[...TIER_COMPARISON_HEADER], ...tierComparisonRows(record.sim.tiers, record.demo.result.tiers)];
}

/** The same table in Markdown. */
export function markdownChainComparison(fileText: string): string {
  return markdownTable(chainComparisonCells(fileText));
}

import type { TierFigures } from "./tier-figures.ts";

/*
 * What a chain's run gives per tier (docs/tiers.md): the types that the real chain's reader
 * (src/runtime/chain-figures.ts), the report and summary.json share.
 */

/** The users' totals over the run. */
export interface ChainUsers {
  readonly requests: number;
  readonly ok: number;
  readonly gaveUp: number;
  readonly attempts: number;
}

/** Arrivals per second at one tier, window by window, for a chart: times in s from the run's start (startEpochMs), as the other charts. */
export interface TierSeries {
  readonly name: string;
  readonly points: readonly { readonly atS: number; readonly arrivalsPerSec: number }[];
}

export interface ChainFigures {
  readonly users: ChainUsers;
  readonly tiers: readonly TierFigures[];
  /** The tier that collapsed first; null when none did. */
  readonly firstCollapsed: string | null;
  /** The same in words, with why: "first to collapse: db at 20s (…), by its own fault db:crash@15s+15s". */
  readonly firstCollapsedText: string;
  readonly series: readonly TierSeries[];
}

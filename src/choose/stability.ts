import { levelAtTop, ranking } from "../recommend/ranking.ts";
import type { CandidateSummary } from "../recommend/summary.ts";

/*
 * How sure the answer is: the top candidates ranked again with each seed alone (the seeds of
 * the run and the extra -stability-seeds), by the same rule, and how often each comes first.
 */

/** A recommendation that wins with fewer than this share of the seeds is labelled unstable. */
export const STABLE_SHARE = 0.8;

export interface Stability {
  readonly seeds: readonly number[];
  /**
   * Each top candidate, in the run's ranking order: the seeds on which it ranked first alone,
   * and those on which it was level on every figure with another at the top.
   */
  readonly wins: readonly { readonly id: string; readonly wins: number; readonly level: number }[];
  /** The recommendation's share of the seeds: first alone or level at the top. */
  readonly share: number;
  readonly stable: boolean;
}

/**
 * `perSeed` holds, for each of the top candidates (in ranking order, the recommendation
 * first), its summary with one seed alone, one per entry of `seeds`.
 */
export function stability(perSeed: readonly (readonly CandidateSummary[])[], seeds: readonly number[]): Stability {
  const ids = perSeed.map((summaries) => summaries[0]!.candidate.id);
  const wins = new Map(ids.map((id) => [id, { id, wins: 0, level: 0 }]));
  for (const [index] of seeds.entries()) {
    const top = levelAtTop(ranking(perSeed.map((summaries) => summaries[index]!)));
    for (const summary of top) {
      const entry = wins.get(summary.candidate.id)!;
      if (top.length === 1) entry.wins++;
      else entry.level++;
    }
  }
  const first = wins.get(ids[0]!)!;
  const share = seeds.length === 0 ? 0 : (first.wins + first.level) / seeds.length;
  return { seeds, wins: ids.map((id) => wins.get(id)!), share, stable: share >= STABLE_SHARE };
}

const tally = (entry: Stability["wins"][number]) => `${entry.wins}${entry.level > 0 ? ` (+${entry.level} level)` : ""}`;

/** "It comes first with 7 of 8 seeds (…)" or "UNSTABLE: …". */
export function stabilityText(result: Stability): string {
  const [first, ...others] = result.wins;
  if (first === undefined) return "";
  const count = `${first.wins + first.level} of ${result.seeds.length} seeds`;
  const level = first.level > 0 ? `, level on every figure with another of them in ${first.level}` : "";
  const rest = others.map((entry) => `${entry.id} ${tally(entry)}`).join(", ");
  const against = rest === "" ? "" : ` (each seed ranked alone, against the next ${others.length}: ${rest})`;
  return result.stable
    ? `It comes first with ${count}${level}${against}.`
    : `UNSTABLE: it comes first with only ${count}${level}, fewer than ${STABLE_SHARE * 100} %${against}; treat the top candidates as equals.`;
}

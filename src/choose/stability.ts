import { rank } from "./ranking.ts";
import type { CandidateSummary } from "./summary.ts";

/*
 * How sure the answer is: the top candidates ranked again with each seed alone (the seeds of
 * the run and the extra -stability-seeds), by the same rule, and how often each comes first.
 */

/** A recommendation that wins with fewer than this share of the seeds is labelled unstable. */
export const STABLE_SHARE = 0.8;

export interface Stability {
  readonly seeds: readonly number[];
  /** Each top candidate and the seeds on which it ranked first, in the run's ranking order. */
  readonly wins: readonly { readonly id: string; readonly wins: number }[];
  /** The recommendation's share of the seeds. */
  readonly share: number;
  readonly stable: boolean;
}

/**
 * `perSeed` holds, for each of the top candidates (in ranking order, the recommendation
 * first), its summary with one seed alone, one per entry of `seeds`.
 */
export function stability(perSeed: readonly (readonly CandidateSummary[])[], seeds: readonly number[]): Stability {
  const ids = perSeed.map((summaries) => summaries[0]!.candidate.id);
  const wins = new Map(ids.map((id) => [id, 0]));
  for (const [index] of seeds.entries()) {
    const first = rank(perSeed.map((summaries) => summaries[index]!))[0]!;
    wins.set(first.candidate.id, wins.get(first.candidate.id)! + 1);
  }
  const share = seeds.length === 0 ? 0 : wins.get(ids[0]!)! / seeds.length;
  return { seeds, wins: ids.map((id) => ({ id, wins: wins.get(id)! })), share, stable: share >= STABLE_SHARE };
}

/** "It wins with 7 of 8 seeds (…)" or "UNSTABLE: …". */
export function stabilityText(result: Stability): string {
  const [first, ...others] = result.wins;
  if (first === undefined) return "";
  const count = `${first.wins} of ${result.seeds.length} seeds`;
  const rest = others.map((entry) => `${entry.id} ${entry.wins}`).join(", ");
  const against = rest === "" ? "" : ` (ranked alone with each seed against the next ${others.length}: ${rest})`;
  return result.stable
    ? `It wins with ${count}${against}.`
    : `UNSTABLE: it wins with only ${count}, fewer than ${STABLE_SHARE * 100} %${against}; treat the top candidates as equals.`;
}

import { type Measured, measureAll, firstSeedTimelines, ScreenedMeasure, toConfig } from "../recommend/grid-measure.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { WorkerPool } from "../runtime/worker-pool.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import { FIXED, pair, type ServerLever } from "../recommend/candidates.ts";
import type { MeasurePlan } from "../recommend/measure.ts";
import { type ChooseOptions, STABILITY_TOP } from "../options/choose.ts";
import { explanationCandidates, paretoFront, rank } from "../recommend/ranking.ts";
import { bestPair, deployableAlternative, type FirstWait } from "./recommendation.ts";
import { type Stability, stability } from "./stability.ts";
import { type Timeline } from "../recommend/report.ts";
import { firstWait, intentOf } from "../recommend/snippets.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import { halvesOf } from "./recommendation.ts";

/*
 * choose's measure stage: every candidate of the grid on the first seed, then the ones the answer
 * names on the others (screening, -screen-top), the server levers paired with client policies,
 * the timelines the report draws and the stability count.
 */

/** The best this many on each figure the answer's paragraph compares the winner on run every seed (-screen-top). */
const EXPLANATION_RIVALS = 3;
/** How many client policies, besides the baselines, are paired with each server lever. */
export const SERVER_SIDE_TOP = 5;
/** Candidates whose timelines the report overlays (with fixed retry). */
const TIMELINE_TOP = 3;
/** The candidates whose first seed's timelines the report overlays: the top ones and fixed retry. */
export const timelineIds = (ranked: readonly CandidateSummary[]): string[] => {
  const shown = ranked.slice(0, TIMELINE_TOP).map((summary) => summary.candidate.id);
  return shown.includes(FIXED) ? shown : [...shown, FIXED];
};

/** What the measure stage found: every candidate's summary over the seeds, the first seed's timelines, and the stability count. */
export interface Measurement {
  readonly summaries: CandidateSummary[];
  readonly timelines: Map<string, Timeline[]>;
  /** The server levers paired with client policies (none without levers). */
  readonly pairs: Measured[];
  readonly stability: Stability | undefined;
}

/** A candidate's retry intent (its policy and timeout on the user's system), from its simulator configuration. */
export const intentFor = (configs: ReadonlyMap<string, SimulationConfig>) => (summary: CandidateSummary) => {
  const config = configs.get(summary.candidate.id)!;
  return intentOf(summary.candidate.id, config.retry, config.timeoutMs, summary.candidate.client, summary.candidate.server);
};

export const firstWaitOf = (configs: ReadonlyMap<string, SimulationConfig>) => {
  const intent = intentFor(configs);
  return (summary: CandidateSummary) => firstWait(intent(summary));
};

/** How far down the ranking every candidate runs every seed: -screen-top, and at least the stability count's and -validate's top. */
export function screenTop(options: ChooseOptions): number {
  const own = options.own;
  if (own["screen-top"] === 0) return Infinity;
  return Math.max(own["screen-top"], STABILITY_TOP, own.validate ? own["validate-top"] : 0);
}

/**
 * The candidates the answer names or draws, which run every seed: the top of the ranking, the
 * baselines and -validate-against, the Pareto front (the runner-up is on it, or second), the best
 * few on each figure the paragraph on why the winner wins compares it on, the best pair (what a
 * server lever would add), the halves of a winning pair, and the best candidate without a long
 * first wait (deployability's alternative).
 */
function namedByAnswer(options: ChooseOptions, firstWaitOfSummary: (summary: CandidateSummary) => FirstWait) {
  return (summaries: readonly CandidateSummary[]): CandidateSummary[] => {
    const ranked = rank(summaries);
    const winner = ranked[0];
    const halves = winner === undefined ? [] : Object.values(halvesOf(winner, summaries));
    return [
      ...ranked.slice(0, screenTop(options)),
      ...summaries.filter((summary) => summary.candidate.origin === "baseline" || summary.candidate.id === options.own["validate-against"]),
      ...paretoFront(ranked),
      ...explanationCandidates(ranked, EXPLANATION_RIVALS),
      bestPair(ranked),
      ...halves,
      deployableAlternative(ranked, firstWaitOfSummary, options.sloMs),
    ].filter((summary): summary is CandidateSummary => summary !== undefined);
  };
}

/** The measure stage: the client grid, then the server levers paired with client policies, then the top candidates on more seeds. */
export async function measure(
  options: ChooseOptions,
  plan: MeasurePlan,
  grid: readonly Measured[],
  levers: readonly ServerLever[],
  skipped: string[],
  io: ProgramIo,
): Promise<Measurement> {
  // Each result comes back to its own job: the order the threads finish in does not matter.
  const pool = new WorkerPool("choose", options.parallel);
  const perSeed = new Map<string, CandidateSummary[]>();
  let pairs: Measured[] = [];
  let stabilityRuns: Stability | undefined;
  try {
    const configs = new Map(grid.map((entry) => [entry.candidate.id, entry.config]));
    const named = namedByAnswer(options, firstWaitOf(configs));
    const screened = new ScreenedMeasure({ seeds: options.seeds, plan, pool, io, top: screenTop(options), named });
    let summaries = await screened.add(grid, "choose: simulating");
    if (levers.length > 0) {
      pairs = leverPairs(options, rank(summaries), grid, levers, skipped);
      for (const entry of pairs) configs.set(entry.candidate.id, entry.config);
      await screened.add(pairs, "choose: server levers");
    }
    summaries = screened.finish(perSeed);
    // Only the candidates the report draws need their outages played whole (the others' runs end once the server cannot come back).
    const ranked = rank(summaries);
    const drawn = timelineIds(ranked);
    const timelines = await firstSeedTimelines(
      [...grid, ...pairs].filter((entry) => drawn.includes(entry.candidate.id)),
      options.seeds[0]!,
      plan,
      pool,
    );
    const leaders = ranked.slice(0, STABILITY_TOP);
    if (options.stabilitySeeds.length > 0 && leaders.length > 1) {
      const entries = [...grid, ...pairs].filter((entry) => leaders.some((summary) => summary.candidate === entry.candidate));
      await measureAll(entries, options.stabilitySeeds, plan, pool, io, "choose: stability seeds", perSeed);
      stabilityRuns = stability(
        leaders.map((summary) => perSeed.get(summary.candidate.id)!),
        [...options.seeds, ...options.stabilitySeeds],
      );
    }
    return { summaries, timelines, pairs, stability: stabilityRuns };
  } finally {
    await pool.close();
  }
}

/**
 * The server's levers with the best client policies and the baselines when no client
 * policy qualifies alone (or -server-side asks); otherwise with the winner alone, to say what they would add.
 */
function leverPairs(
  options: ChooseOptions,
  ranked: readonly CandidateSummary[],
  grid: readonly Measured[],
  levers: readonly ServerLever[],
  skipped: string[],
): Measured[] {
  const clients =
    options.own["server-side"] || !ranked[0]!.survivesAll
      ? [
          ...ranked
            .filter((summary) => summary.candidate.origin !== "baseline")
            .slice(0, SERVER_SIDE_TOP)
            .map((summary) => summary.candidate),
          ...grid.filter((entry) => entry.candidate.origin === "baseline").map((entry) => entry.candidate),
        ]
      : [ranked[0]!.candidate];
  return clients.flatMap((client) =>
    levers.flatMap((lever) => {
      const candidate = pair(client, lever);
      try {
        return [{ candidate, config: toConfig(options.system, candidate.client, candidate.server) }];
      } catch (error) {
        skipped.push(`${candidate.id}: ${(error as Error).message}`);
        return [];
      }
    }),
  );
}

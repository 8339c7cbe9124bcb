import type { OccTrialConfig, OccTrialResult } from "./occ-trial.ts";
import { runOccTrial } from "./occ-trial.ts";

/** The blog's figures: means over independent runs (its simulator averages 100). */
export interface OccFigures {
  readonly clients: number;
  readonly trials: number;
  /** Mean writes per run: the blog's "calls" (work). */
  readonly writes: number;
  /** Standard deviation of one run's writes around the mean: the spread of a single run. */
  readonly writesSd: number;
  /** Mean reads + writes per run. */
  readonly calls: number;
  /** Mean writes that landed per run: the clients, unless some gave up. */
  readonly landed: number;
  /** Mean time until every client's write landed, ms. */
  readonly completionMs: number;
  readonly completionMsSd: number;
  /** Runs in which some client gave up (only a policy with an attempt limit does). */
  readonly runsWithGiveUps: number;
}

/** Runs `trials` independent trials, trial t on seed `seed + t`, and averages them. */
export function averageOccTrials(config: OccTrialConfig, trials: number): OccFigures {
  const results: OccTrialResult[] = [];
  for (let trial = 0; trial < trials; trial++) results.push(runOccTrial({ ...config, seed: (config.seed + trial) | 0 }));
  const mean = (pick: (result: OccTrialResult) => number) => results.reduce((sum, result) => sum + pick(result), 0) / trials;
  const sd = (pick: (result: OccTrialResult) => number) => {
    const average = mean(pick);
    return Math.sqrt(mean((result) => (pick(result) - average) ** 2));
  };
  return {
    clients: config.clients,
    trials,
    writes: mean((result) => result.writes),
    writesSd: sd((result) => result.writes),
    calls: mean((result) => result.calls),
    landed: mean((result) => result.landed),
    completionMs: mean((result) => result.completionMs),
    completionMsSd: sd((result) => result.completionMs),
    runsWithGiveUps: results.filter((result) => result.gaveUp > 0).length,
  };
}

import { formatDuration } from "../cli/duration.ts";
import { latencyText, longestText, percent, ranking } from "../recommend/ranking.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import type { Variant } from "./variants.ts";

/*
 * The grade of a user's policy and the smallest change that qualifies: pure functions of the
 * summaries choose's measure gave, so that one place decides what check says.
 */

/** What check says of one policy on the user's system. */
export interface Grade {
  readonly qualifies: boolean;
  /** Success within the SLO, everyday. */
  readonly sloSuccess: number;
  readonly retriedP99Ms: number | undefined;
  readonly amplification: number;
  /** The longest outage survived with every seed, and whether it is only "at least" that (the longest tried). */
  readonly longestSurvivedMs: number;
  readonly longestIsAtLeast: boolean;
  readonly listedSurvived: number;
  readonly listed: number;
  /** The first listed outage it does not survive, when it does not qualify. */
  readonly firstFailedOutageMs: number | undefined;
  /** Its place among choose's candidates and the user's policies, from 1; 0 of 0 for a change, which is not ranked among them. */
  readonly rank: number;
  readonly of: number;
}

export function gradeOf(summary: CandidateSummary, ranked: readonly CandidateSummary[] = []): Grade {
  const failed = summary.outages.find((outage) => !outage.survived);
  return {
    qualifies: summary.survivesAll,
    sloSuccess: summary.everyday.sloSuccess,
    retriedP99Ms: summary.everyday.retriedP99Ms,
    amplification: summary.everyday.amplification,
    longestSurvivedMs: summary.longestSurvivedMs,
    longestIsAtLeast: summary.longestIsAtLeast,
    listedSurvived: summary.listedSurvived,
    listed: summary.outages.length,
    firstFailedOutageMs: failed?.outageMs,
    rank: ranked.indexOf(summary) + 1,
    of: ranked.length,
  };
}

/** The grade in one paragraph of lines, as the text output prints it. */
export function gradeLines(grade: Grade, summary: CandidateSummary, sloMs: number, maxOutageMs: number): string[] {
  const verdict = grade.qualifies
    ? `qualifies: the server recovered after every listed outage (${grade.listed} of ${grade.listed}), with every seed`
    : `does not qualify: ${failureText(summary, grade)}`;
  return [
    verdict,
    `success within the SLO of ${formatDuration(sloMs)}: ${percent(grade.sloSuccess)}`,
    `the retried requests' p99: ${latencyText(grade.retriedP99Ms)}${grade.retriedP99Ms === undefined ? " (no request needed a retry and succeeded)" : ""}`,
    `amplification: ${grade.amplification.toFixed(3)}x`,
    `the longest outage survived: ${longestText(summary, maxOutageMs)}`,
  ];
}

function failureText(summary: CandidateSummary, grade: Grade): string {
  const outage = summary.outages.find((entry) => !entry.survived)!;
  const seeds = outage.verdicts.length;
  const bad = outage.verdicts.filter((verdict) => verdict === "collapsed" || verdict === "too-short").length;
  return (
    `after the ${formatDuration(outage.outageMs)} outage the server ${outage.verdict === "collapsed" ? "stayed down" : `was ${outage.verdict}`}` +
    `${seeds > 1 ? ` (${bad} of ${seeds} seeds)` : ""}; it survives ${grade.listedSurvived} of ${grade.listed} listed outages`
  );
}

/** A variant with its summary: what check may propose. */
export interface Measured<T = Variant, S = CandidateSummary> {
  readonly variant: T;
  readonly summary: S;
}

/**
 * The smallest change that qualifies: of the variants that qualify, the fewest lines changed in
 * the user's file; among those, the first by the ranking rule (`first`: choose's, or its chain
 * rule). Undefined when none qualifies.
 */
export function smallestQualifying<T extends { readonly changedLines: number }, S = CandidateSummary>(
  variants: readonly Measured<T, S>[],
  qualifies: (summary: S) => boolean = (summary) => (summary as CandidateSummary).survivesAll,
  first: (summaries: readonly S[]) => S = (summaries) => ranking(summaries as unknown as CandidateSummary[]).ranked[0] as S,
): Measured<T, S> | undefined {
  const qualifying = variants.filter((entry) => qualifies(entry.summary));
  if (qualifying.length === 0) return undefined;
  const fewest = Math.min(...qualifying.map((entry) => entry.variant.changedLines));
  const smallest = qualifying.filter((entry) => entry.variant.changedLines === fewest);
  const best = first(smallest.map((entry) => entry.summary));
  return smallest.find((entry) => entry.summary === best);
}

import { formatDuration } from "../cli/duration.ts";
import { chainVerdict } from "../model/tiers/chain-verdict.ts";
import type { TierVerdict } from "../model/tiers/tier-figures.ts";
import { AS_THE_FILE_SAYS, type ChainCandidate, PLACEMENTS } from "./chain-candidates.ts";
import type { ChainRunResult } from "./chain-measure.ts";
import {
  type Criterion,
  MIN_RELATIVE_DIFFERENCE,
  order,
  type Ranking,
  relative,
  sloSuccessCriterion,
  SUCCESS_NOISE_TEXT,
  USER_SUCCESS_TEXT,
} from "./ranking.ts";

/*
 * A chain candidate's figures over its runs (seeds × fault schedules), and their ranking by
 * choose's ranking code (ranking.ts order) and its user-first rule: candidates whose every tier
 * came back in every run first (as a single server's qualify), then the users' success within the
 * SLO (the single server's criterion), then the chain's own figures as tie-breaks: when the last
 * tier was back, the attempts per user request at the bottom tier during the faults, the peak load.
 */

export interface ChainTierSummary {
  readonly name: string;
  /** The worst run's verdict of this tier. */
  readonly verdict: TierVerdict;
  /** Attempts at this tier per user request while the faults lasted: the largest over the runs (null without a fault window). */
  readonly faultAmplification: number | null;
  /** Attempts per user request over the whole run, the largest over the runs. */
  readonly amplification: number;
  /** Peak arrivals/s ÷ normal arrivals/s, the largest over the runs. */
  readonly peakLoad: number | null;
  readonly policyAmplification: number | null;
  /** Answers done after the caller had gone, mean over the runs. */
  readonly workForNobody: number;
}

export interface ChainSummary {
  readonly candidate: ChainCandidate;
  readonly runs: number;
  /** The worst verdict of any tier in any run. */
  readonly verdict: TierVerdict;
  /** Each run's verdict (the worst tier's), seeds within schedules. */
  readonly verdicts: readonly TierVerdict[];
  /** The users' OK answers per second over the run, mean over the runs, and its spread (largest less smallest). */
  readonly goodputPerSec: number;
  readonly goodputSpread: number;
  /** The users' requests that succeeded ÷ those that ended, over every run. */
  readonly successRate: number;
  /**
   * The users' requests that succeeded within the SLO ÷ those that had the whole SLO, over every run, and its spread
   * across seeds (the largest over the fault schedules).
   */
  readonly sloSuccess: number;
  readonly sloSuccessSpread: number;
  /** When the last tier that collapsed was back (from the run's start), the latest run: 0 if none collapsed, null if one stayed down. */
  readonly backAtMs: number | null;
  /** The largest peak load of any tier in any run, and that tier. */
  readonly peakLoad: number;
  readonly peakTier: string;
  readonly tiers: readonly ChainTierSummary[];
}

const share = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

/**
 * The seed-to-seed spread of a figure: max − min over the seeds of one fault schedule, the
 * largest over the schedules. Over all runs at once, the gap between a mild and a long fault
 * would pass for noise and make every candidate level.
 */
function seedSpread(runs: readonly ChainRunResult[], figure: (run: ChainRunResult) => number): number {
  const bySchedule = new Map<number, number[]>();
  for (const run of runs) bySchedule.set(run.scheduleIndex, [...(bySchedule.get(run.scheduleIndex) ?? []), figure(run)]);
  return Math.max(...[...bySchedule.values()].map((values) => Math.max(...values) - Math.min(...values)));
}

const largest = (values: readonly (number | null)[]): number | null => {
  const present = values.filter((value): value is number => value !== null);
  return present.length === 0 ? null : Math.max(...present);
};

export function summarizeChain(candidate: ChainCandidate, runs: readonly ChainRunResult[]): ChainSummary {
  if (runs.length === 0) throw new Error(`no runs for ${candidate.id}`);
  const reports = runs.map((run) => run.report);
  const verdicts = reports.map((report) => chainVerdict(report.tiers.map((tier) => tier.verdict)));
  const goodputOf = (run: ChainRunResult) => (run.report.users.ok * 1000) / run.report.durationMs;
  const goodputs = runs.map(goodputOf);
  const sloShareOf = (run: ChainRunResult) => share(run.slo.withinSlo, run.slo.requests);
  const ok = reports.reduce((sum, report) => sum + report.users.ok, 0);
  const ended = reports.reduce((sum, report) => sum + report.users.ok + report.users.gaveUp, 0);
  const backs = reports.map((report) =>
    report.tiers.some((tier) => tier.verdict === "collapsed") ? null : Math.max(0, ...report.tiers.map((tier) => tier.recoveredAtMs ?? 0)),
  );
  const tiers = reports[0]!.tiers.map((first, index): ChainTierSummary => {
    const each = reports.map((report) => report.tiers[index]!);
    return {
      name: first.name,
      verdict: chainVerdict(each.map((tier) => tier.verdict)),
      faultAmplification: largest(each.map((tier) => tier.faultAmplification)),
      amplification: Math.max(...each.map((tier) => tier.amplification)),
      peakLoad: largest(each.map((tier) => tier.peakLoad)),
      policyAmplification: first.policyAmplification,
      workForNobody: each.reduce((sum, tier) => sum + tier.workForNobody, 0) / each.length,
    };
  });
  const peak = tiers.reduce((a, b) => ((b.peakLoad ?? 0) > (a.peakLoad ?? 0) ? b : a));
  return {
    candidate,
    runs: runs.length,
    verdict: chainVerdict(verdicts),
    verdicts,
    goodputPerSec: goodputs.reduce((sum, value) => sum + value, 0) / goodputs.length,
    goodputSpread: seedSpread(runs, goodputOf),
    successRate: share(ok, ended),
    sloSuccess: share(
      runs.reduce((sum, run) => sum + run.slo.withinSlo, 0),
      runs.reduce((sum, run) => sum + run.slo.requests, 0),
    ),
    sloSuccessSpread: seedSpread(runs, sloShareOf),
    backAtMs: backs.some((back) => back === null) ? null : Math.max(...(backs as number[])),
    peakLoad: peak.peakLoad ?? 0,
    peakTier: peak.name,
    tiers,
  };
}

/** The runs in which every tier was back at the end: all of them is the chain's qualifying, as a single server's recovering. */
const backInEveryRun = (summary: ChainSummary) => summary.verdicts.filter((verdict) => verdict !== "collapsed").length;
/** A chain candidate qualifies when every tier was back at the end of every run, as the ranking rule says. */
export const chainQualifies = (summary: ChainSummary): boolean => backInEveryRun(summary) === summary.runs;
/** The bottom tier's attempts per user request while the faults lasted (over the whole run without a fault window). */
export const bottomAmplification = (summary: ChainSummary) => {
  const bottom = summary.tiers.at(-1)!;
  return bottom.faultAmplification ?? bottom.amplification;
};

const CHAIN_CRITERIA: readonly Criterion<ChainSummary>[] = [
  {
    name: "the runs with every tier back",
    rule: "the runs in which every tier was back at the end (more first: the candidates that qualify first)",
    better: "higher",
    value: backInEveryRun,
    primary: true,
  },
  sloSuccessCriterion(
    (summary) => summary.sloSuccess,
    (summary) => summary.sloSuccessSpread,
  ),
  {
    name: "recovery",
    rule: "when the last tier that collapsed was back, from the run's start (earlier first; none collapsed is earliest)",
    better: "lower",
    value: (summary) => summary.backAtMs ?? Infinity,
  },
  {
    name: "the bottom tier's amplification",
    rule: "the bottom tier's attempts per user request while the faults lasted (lower first)",
    better: "lower",
    value: bottomAmplification,
    noise: (a, b) => relative(bottomAmplification(a), bottomAmplification(b)),
  },
  {
    name: "load",
    rule: "the largest peak load of any tier, peak arrivals per second ÷ normal (lower first)",
    better: "lower",
    value: (summary) => summary.peakLoad,
    noise: (a, b) => relative(a.peakLoad, b.peakLoad),
  },
];

export function rankChain(summaries: readonly ChainSummary[]): Ranking<ChainSummary> {
  return order(summaries, CHAIN_CRITERIA);
}

/** The rule in words, from the criteria it ranks by, with the users' SLO: the single server's user-first rule, for a chain. */
export function chainRankingRule(sloMs: number): string {
  const noisy = CHAIN_CRITERIA.filter((criterion) => criterion.noise !== undefined).map((criterion) => criterion.name);
  const rules = CHAIN_CRITERIA.map((criterion) => criterion.rule.replace("{slo}", formatDuration(sloMs)));
  return (
    `A chain candidate qualifies when, in every run (seeds x fault schedules), every tier was back at the end: a tier has ` +
    `collapsed when its goodput fell below half its normal, and is back at 90 % (docs/tiers.md). ${USER_SUCCESS_TEXT} ` +
    `Chain candidates rank by ${rules[0]}, then by ${rules[1]}, over the users' requests (what the first tier's callers see), ` +
    `then by the chain's figures: ${rules.slice(2).join(", then ")}, then id. ` +
    `${capitalized(listing(noisy))} are compared within noise: the best candidate and those within noise of it are level, and ` +
    `the next figure orders them; a difference is noise when it is no larger than either candidate's spread across seeds (the largest over the fault schedules), or than ` +
    `${MIN_RELATIVE_DIFFERENCE * 100} % of the larger value (${SUCCESS_NOISE_TEXT}). The first-ranked candidate is the recommendation.`
  );
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** "a, b and c". */
const listing = (items: readonly string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

const flags = (settings: Readonly<Record<string, string>>) =>
  Object.entries(settings)
    .map(([name, value]) => `-${name} ${value}`)
    .join(" ");

const percent = (rate: number) => `${(rate * 100).toFixed(2)} %`;
const times = (value: number) => `${value.toFixed(2)}x`;
const backText = (summary: ChainSummary) =>
  summary.backAtMs === null
    ? "a tier stays down at the end"
    : summary.backAtMs === 0
      ? "no tier collapsed"
      : `every tier back by ${formatDuration(summary.backAtMs)}`;

/** The recommendation in words: which layers retry and how, which try once, what the users get and what the bottom tier takes. */
export function chainHeadline(ranked: readonly ChainSummary[], bottom: string, sloMs: number): string {
  const winner = ranked[0];
  if (winner === undefined) return "No chain candidate was measured.";
  const candidate = winner.candidate;
  const placement = PLACEMENTS.find((entry) => entry.id === candidate.placement)!;
  const retrying = candidate.layers.filter((layer) => layer.retries);
  const once = candidate.layers.filter((layer) => !layer.retries).map((layer) => layer.name);
  const how =
    candidate.policy === "as-given"
      ? `each with its own policy from the file (${retrying.map((layer) => `${layer.name}: ${flags(layer.settings)}`).join("; ")})`
      : `with ${candidate.policySummary}${placement.id === "every-layer-budget" ? ", and gRPC's retry budget (-budget grpc)" : ""}`;
  const rest = once.length === 0 ? "" : `; ${listing(once)} should try once`;
  const lead = winner.verdict === "collapsed" ? "No candidate keeps every tier up after the faults; the best: " : "";
  return (
    `${lead}Retry ${placement.where} (${candidate.id}): ${listing(retrying.map((layer) => layer.name))} ${retrying.length === 1 ? "retries" : "retry"} ${how}${rest} ` +
    `(${bottom}, the bottom, calls nobody). ${percent(winner.sloSuccess)} of the users' requests succeed within the SLO of ` +
    `${formatDuration(sloMs)} (${winner.goodputPerSec.toFixed(1)} OK/s), ${backText(winner)}; ${bottom} gets ` +
    `${times(bottomAmplification(winner))} attempts per user request during the faults, peak load ${times(winner.peakLoad)} at ${winner.peakTier}.`
  );
}

/**
 * What the users' success costs the chain: against the candidate that qualifies as the winner
 * does and sends the fewest attempts to the bottom tier, the winner's amplification there, peak
 * load and recovery, beside that candidate's success within the SLO. Undefined when the winner
 * is that candidate, or level with it within noise.
 */
export function chainQualification(ranked: readonly ChainSummary[]): string | undefined {
  const winner = ranked[0];
  if (winner === undefined) return undefined;
  const amplification = CHAIN_CRITERIA.find((criterion) => criterion.name === "the bottom tier's amplification")!;
  const peers = ranked.filter((summary) => backInEveryRun(summary) === backInEveryRun(winner));
  const lightest = peers.reduce((a, b) => (bottomAmplification(b) < bottomAmplification(a) ? b : a));
  const gap = bottomAmplification(winner) - bottomAmplification(lightest);
  if (lightest === winner || gap <= amplification.noise!(winner, lightest)) return undefined;
  const bottom = winner.tiers.at(-1)!.name;
  const recovery =
    winner.backAtMs === lightest.backAtMs ? `${backText(winner)} with both` : `${backText(winner)}, against ${backText(lightest)}`;
  return (
    `What the users' success costs the chain: ${bottom} gets ${times(bottomAmplification(winner))} attempts per user request ` +
    `during the faults, against ${times(bottomAmplification(lightest))} with ${lightest.candidate.id} (${percent(lightest.sloSuccess)} ` +
    `within the SLO); peak load ${times(winner.peakLoad)} at ${winner.peakTier} against ${times(lightest.peakLoad)} at ` +
    `${lightest.peakTier}; ${recovery}.`
  );
}

/** Against the file's own policy at every layer: what the winner changes at the bottom. */
export function chainComparison(ranked: readonly ChainSummary[]): string | undefined {
  const winner = ranked[0];
  const plain = ranked.find((summary) => summary.candidate.id === AS_THE_FILE_SAYS);
  if (winner === undefined || plain === undefined || plain === winner) return undefined;
  return (
    `Every layer as the file gives it (${AS_THE_FILE_SAYS}) ranks ${ranked.indexOf(plain) + 1}: verdict ${plain.verdict}, ` +
    `${percent(plain.sloSuccess)} within the SLO; its bottom tier, ${plain.tiers.at(-1)!.name}, gets ${times(bottomAmplification(plain))} ` +
    `attempts per user request during the faults, against ${times(bottomAmplification(winner))} with ${winner.candidate.id}.`
  );
}

/** When the winner is level with the next within noise on the users' success and a later figure decided: the sentence that says so. */
export function chainTieBreak(result: Ranking<ChainSummary>): string | undefined {
  const [winner, second] = result.ranked;
  const deciding = result.decidedBy[0];
  if (winner === undefined || second === undefined || deciding === undefined) return undefined;
  const index = CHAIN_CRITERIA.findIndex((criterion) => criterion.name === deciding);
  if (index >= 0 && CHAIN_CRITERIA[index]!.primary === true) return undefined;
  const level = (index < 0 ? CHAIN_CRITERIA : CHAIN_CRITERIA.slice(0, index)).map((criterion) => criterion.name);
  return (
    `Decided by a tie-break: ${second.candidate.id} is level with it within noise on ${listing(level)}` +
    (index < 0 ? ", and on every figure: either will do." : `, and ${deciding} decides.`)
  );
}

import { formatDuration } from "../cli/duration.ts";
import { chainVerdict, TIER_VERDICT_ORDER } from "../model/tiers/chain-verdict.ts";
import type { TierVerdict } from "../model/tiers/tier-figures.ts";
import { AS_THE_FILE_SAYS, type ChainCandidate, PLACEMENTS } from "./chain-candidates.ts";
import type { ChainRunResult } from "./chain-measure.ts";
import { type Criterion, order, type Ranking, relative } from "./ranking.ts";

/*
 * A chain candidate's figures over its runs (seeds × fault schedules), and their ranking by
 * choose's ranking code (ranking.ts order): the chain's verdict first (the worst tier's, the
 * worst run's), then the users' goodput, when the last tier came back, and the peak load.
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
  /** When the last tier that collapsed was back (from the run's start), the latest run: 0 if none collapsed, null if one stayed down. */
  readonly backAtMs: number | null;
  /** The largest peak load of any tier in any run, and that tier. */
  readonly peakLoad: number;
  readonly peakTier: string;
  readonly tiers: readonly ChainTierSummary[];
}

const largest = (values: readonly (number | null)[]): number | null => {
  const present = values.filter((value): value is number => value !== null);
  return present.length === 0 ? null : Math.max(...present);
};

export function summarizeChain(candidate: ChainCandidate, runs: readonly ChainRunResult[]): ChainSummary {
  if (runs.length === 0) throw new Error(`no runs for ${candidate.id}`);
  const reports = runs.map((run) => run.report);
  const verdicts = reports.map((report) => chainVerdict(report.tiers.map((tier) => tier.verdict)));
  const goodputs = reports.map((report) => (report.users.ok * 1000) / report.durationMs);
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
    goodputSpread: Math.max(...goodputs) - Math.min(...goodputs),
    successRate: ended > 0 ? ok / ended : 0,
    backAtMs: backs.some((back) => back === null) ? null : Math.max(...(backs as number[])),
    peakLoad: peak.peakLoad ?? 0,
    peakTier: peak.name,
    tiers,
  };
}

const CHAIN_CRITERIA: readonly Criterion<ChainSummary>[] = [
  {
    name: "the chain's verdict",
    rule: "the chain's verdict, the worst of any tier with any seed (held, then recovered, then collapsed)",
    better: "higher",
    value: (summary) => TIER_VERDICT_ORDER.indexOf(summary.verdict),
    primary: true,
  },
  {
    name: "the users' goodput",
    rule: "the users' goodput, OK answers per second over the run (higher first)",
    better: "higher",
    value: (summary) => summary.goodputPerSec,
    noise: (a, b) => Math.max(a.goodputSpread, b.goodputSpread, relative(a.goodputPerSec, b.goodputPerSec)),
    primary: true,
  },
  {
    name: "recovery",
    rule: "when the last tier that collapsed was back, from the run's start (earlier first)",
    better: "lower",
    value: (summary) => summary.backAtMs ?? Infinity,
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

/** The rule in words, from the criteria it ranks by. */
export function chainRankingRule(): string {
  const noisy = CHAIN_CRITERIA.filter((criterion) => criterion.noise !== undefined).map((criterion) => criterion.name);
  return (
    `Chain candidates rank by ${CHAIN_CRITERIA.map((criterion) => criterion.rule).join(", then ")}, then id. ` +
    `${capitalized(listing(noisy))} are compared within noise (the spread across runs, or 1 % of the larger value): ` +
    `candidates level on one go to the next. A tier has collapsed when its goodput fell below half its normal, ` +
    `and is back at 90 % (docs/tiers.md). The first-ranked candidate is the recommendation.`
  );
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** "a, b and c". */
const listing = (items: readonly string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

const flags = (settings: Readonly<Record<string, string>>) =>
  Object.entries(settings)
    .map(([name, value]) => `-${name} ${value}`)
    .join(" ");

/** The recommendation in words: which layers retry and how, which try once, and what the users get. */
export function chainHeadline(ranked: readonly ChainSummary[], bottom: string): string {
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
  const back =
    winner.backAtMs === null
      ? "a tier stays down at the end"
      : winner.backAtMs === 0
        ? "no tier collapsed"
        : `every tier back by ${formatDuration(winner.backAtMs)}`;
  const lead = winner.verdict === "collapsed" ? "No candidate keeps every tier up after the faults; the best: " : "";
  return (
    `${lead}Retry ${placement.where} (${candidate.id}): ${listing(retrying.map((layer) => layer.name))} ${retrying.length === 1 ? "retries" : "retry"} ${how}${rest} ` +
    `(${bottom}, the bottom, calls nobody). The users get ${winner.goodputPerSec.toFixed(1)} OK/s (${(winner.successRate * 100).toFixed(2)} % ` +
    `of their requests succeed), ${back}, peak load ${winner.peakLoad.toFixed(2)}x at ${winner.peakTier}.`
  );
}

/** Against the file's own policy at every layer: what the winner changes at the bottom. */
export function chainComparison(ranked: readonly ChainSummary[]): string | undefined {
  const winner = ranked[0];
  const plain = ranked.find((summary) => summary.candidate.id === AS_THE_FILE_SAYS);
  if (winner === undefined || plain === undefined || plain === winner) return undefined;
  const bottomOf = (summary: ChainSummary) => summary.tiers.at(-1)!;
  const amplification = (value: number | null) => (value === null ? "-" : `${value.toFixed(2)}x`);
  return (
    `Every layer as the file gives it (${AS_THE_FILE_SAYS}) ranks ${ranked.indexOf(plain) + 1}: verdict ${plain.verdict}, ` +
    `${plain.goodputPerSec.toFixed(1)} OK/s; its bottom tier, ${bottomOf(plain).name}, gets ${amplification(bottomOf(plain).faultAmplification)} ` +
    `attempts per user request during the faults, against ${amplification(bottomOf(winner).faultAmplification)} with ${winner.candidate.id}.`
  );
}

/** When the winner is level with the next within noise on the users' goodput and a later figure decided: the sentence that says so. */
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

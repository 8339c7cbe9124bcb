import { formatDuration } from "../cli/duration.ts";
import type { CandidateSummary, EverydaySpread } from "./summary.ts";

/*
 * The ranking rule, the Pareto front and the choice of a runner-up: pure functions of the
 * summaries. The rule is a list of criteria; rankingRule() states it in words from that very
 * list, so that what is printed is what is computed.
 */

/** A difference smaller than this share of the larger value is a tie, whatever the seeds' spread. */
export const MIN_RELATIVE_DIFFERENCE = 0.01;
/** Success is compared to at least 0.01 percentage point, latency to at least 1 ms. */
const SUCCESS_RESOLUTION = 1e-4;
const LATENCY_RESOLUTION_MS = 1;

export interface Criterion<T = CandidateSummary> {
  /** Short, for "decided by …". */
  readonly name: string;
  /** As the rule states it. */
  readonly rule: string;
  readonly better: "higher" | "lower";
  /** Missing figures are ±Infinity, the worse end. */
  readonly value: (summary: T) => number;
  /** The largest difference that is noise between two candidates; none: only equal values tie. */
  readonly noise?: (a: T, b: T) => number;
  /** A criterion that decides in its own right (qualifying, the users' success): a win on a later one is a tie-break. */
  readonly primary?: boolean;
}

export const relative = (a: number, b: number) => MIN_RELATIVE_DIFFERENCE * Math.max(Math.abs(a), Math.abs(b));

/** The longest outage survived, with "at least the longest tried" above any finite figure. */
const outageKey = (summary: CandidateSummary) => (summary.longestIsAtLeast ? Infinity : summary.longestSurvivedMs);
const successKey = (summary: CandidateSummary) => Math.round(summary.everyday.sloSuccess / SUCCESS_RESOLUTION);

const QUALIFIES: Criterion = {
  name: "qualifying",
  rule: "",
  better: "higher",
  value: (summary) => (summary.survivesAll ? 1 : 0),
  primary: true,
};
const CLIENT_ONLY: Criterion = {
  name: "needing no server change",
  rule: "client-only candidates before pairs with a server lever (a client change needs nothing from the server)",
  better: "higher",
  value: (summary) => (summary.candidate.lever === "default" ? 1 : 0),
  primary: true,
};
/**
 * Noise between two candidates on a figure: the larger of their spreads across seeds, the
 * minimum relative difference of `size` (the figure, or the share that fails), and a floor.
 */
const noiseOf =
  (spread: keyof EverydaySpread, size: (summary: CandidateSummary) => number, floor = 0) =>
  (a: CandidateSummary, b: CandidateSummary) =>
    Math.max(a.everyday.spread[spread], b.everyday.spread[spread], relative(size(a), size(b)), floor);

/**
 * Success within the SLO, the users' figure, for any summary that has it and its spread across
 * runs: the single server's (its everyday run) and a chain's (choose's chain ranking, the users'
 * requests at the first tier), so that both rank by one rule.
 */
export function sloSuccessCriterion<T>(success: (summary: T) => number, spread: (summary: T) => number): Criterion<T> {
  return {
    name: "success within the SLO",
    rule: "success within the SLO of {slo} (higher first)",
    better: "higher",
    value: success,
    // Compared on the share that misses the SLO: 99.0 % against 99.9 % is ten times the failures, not 1 %.
    noise: (a, b) => Math.max(spread(a), spread(b), relative(1 - success(a), 1 - success(b)), SUCCESS_RESOLUTION),
    primary: true,
  };
}
/** What success within the SLO means, and how it is compared within noise, as both rules state it. */
export const USER_SUCCESS_TEXT = "A request succeeds for its user when it succeeds within the SLO, retries and waits included.";
export const SUCCESS_NOISE_TEXT = "for success, of the larger share of requests that miss the SLO, and at least 0.01 percentage point";

const SLO_SUCCESS: Criterion = sloSuccessCriterion(
  (summary) => summary.everyday.sloSuccess,
  (summary) => summary.everyday.spread.sloSuccess,
);
const RETRIED_P99: Criterion = {
  name: "the retried requests' p99",
  rule: "the p99 latency of the successful requests that needed a retry, first try to success (lower first; none counts as worst)",
  better: "lower",
  value: (summary) => summary.everyday.retriedP99Ms ?? Infinity,
  noise: noiseOf("retriedP99Ms", (summary) => summary.everyday.retriedP99Ms ?? 0, LATENCY_RESOLUTION_MS),
};
const AMPLIFICATION: Criterion = {
  name: "amplification",
  rule: "retry amplification (lower first)",
  better: "lower",
  value: (summary) => summary.everyday.amplification,
  noise: noiseOf("amplification", (summary) => summary.everyday.amplification),
};
const LONGEST: Criterion = {
  name: "the longest outage survived",
  rule: "the longest outage survived (longer first)",
  better: "higher",
  value: outageKey,
};
const CLIENTS_BACK: Criterion = {
  name: "the outages the clients came back from",
  rule: "the number of listed outages after which the clients came back too (more first)",
  better: "higher",
  value: (summary) => summary.outages.filter((outage) => outage.verdict === "recovered").length,
};
const CLIENTS_BACK_TOTAL: Criterion = {
  name: "the clients' recovery times",
  rule: "the clients' recovery times added over those outages (shorter first)",
  better: "lower",
  value: (summary) => summary.outages.reduce((sum, outage) => sum + (outage.clientRecoveryMs ?? 0), 0),
};
const LISTED_SURVIVED: Criterion = {
  name: "the listed outages survived",
  rule: "the number of listed outages survived (more first)",
  better: "higher",
  value: (summary) => summary.listedSurvived,
  primary: true,
};

/** How the candidates that qualify are ordered, and how the others are. */
const QUALIFYING_ORDER: readonly Criterion[] = [
  CLIENT_ONLY,
  SLO_SUCCESS,
  RETRIED_P99,
  AMPLIFICATION,
  LONGEST,
  CLIENTS_BACK,
  CLIENTS_BACK_TOTAL,
];
const OTHERS_ORDER: readonly Criterion[] = [
  LISTED_SURVIVED,
  LONGEST,
  SLO_SUCCESS,
  RETRIED_P99,
  AMPLIFICATION,
  CLIENTS_BACK,
  CLIENTS_BACK_TOTAL,
];
const BY_ID = "id (every figure level)";

/** What the ranking orders: anything with a candidate's id. */
interface Ranked {
  readonly candidate: { readonly id: string };
}

const tied = <T extends Ranked>(criterion: Criterion<T>, a: T, b: T) => {
  const left = criterion.value(a);
  const right = criterion.value(b);
  if (left === right) return true;
  if (criterion.noise === undefined || !Number.isFinite(left) || !Number.isFinite(right)) return false;
  return Math.abs(left - right) <= criterion.noise(a, b);
};

const byId = (a: Ranked, b: Ranked) => (a.candidate.id < b.candidate.id ? -1 : a.candidate.id > b.candidate.id ? 1 : 0);

export interface Ranking<T = CandidateSummary> {
  readonly ranked: readonly T[];
  /** Between ranked[i] and ranked[i + 1]: the criterion that put one before the other. */
  readonly decidedBy: readonly string[];
}

/**
 * Orders by each criterion in turn. On a criterion the best candidate and every candidate
 * within noise of it form a group, the next criterion orders the group, and the rest are
 * grouped again from their own best: a tie within noise goes to the next criterion.
 */
export function order<T extends Ranked>(summaries: readonly T[], criteria: readonly Criterion<T>[]): Ranking<T> {
  if (summaries.length <= 1) return { ranked: [...summaries], decidedBy: [] };
  const [criterion, ...rest] = criteria;
  if (criterion === undefined) {
    const ranked = [...summaries].sort(byId);
    return { ranked, decidedBy: ranked.slice(1).map(() => BY_ID) };
  }
  const sign = criterion.better === "higher" ? -1 : 1;
  let remaining = [...summaries].sort((a, b) => {
    const left = criterion.value(a);
    const right = criterion.value(b);
    return left === right ? byId(a, b) : sign * (left < right ? -1 : 1);
  });
  const ranked: T[] = [];
  const decidedBy: string[] = [];
  while (remaining.length > 0) {
    const best = remaining[0]!;
    const group = remaining.filter((summary) => tied(criterion, best, summary));
    remaining = remaining.filter((summary) => !group.includes(summary));
    const inner = order(group, rest);
    if (ranked.length > 0) decidedBy.push(criterion.name);
    ranked.push(...inner.ranked);
    decidedBy.push(...inner.decidedBy);
  }
  return { ranked, decidedBy };
}

export function ranking(summaries: readonly CandidateSummary[]): Ranking {
  const qualifying = order(
    summaries.filter((summary) => summary.survivesAll),
    QUALIFYING_ORDER,
  );
  const others = order(
    summaries.filter((summary) => !summary.survivesAll),
    OTHERS_ORDER,
  );
  const between = qualifying.ranked.length > 0 && others.ranked.length > 0 ? [QUALIFIES.name] : [];
  return { ranked: [...qualifying.ranked, ...others.ranked], decidedBy: [...qualifying.decidedBy, ...between, ...others.decidedBy] };
}

export function rank(summaries: readonly CandidateSummary[]): CandidateSummary[] {
  return [...ranking(summaries).ranked];
}

/**
 * Whether the winner won on a tie-break: the second was level with it, within noise, on
 * success within the SLO (or, among those that do not qualify, on the outages survived),
 * and a later criterion decided. The sentence says which.
 */
export function tieBreak(result: Ranking): string | undefined {
  const [winner, second] = result.ranked;
  const deciding = result.decidedBy[0];
  if (winner === undefined || second === undefined || deciding === undefined) return undefined;
  if (deciding === BY_ID) {
    const level = levelAtTop(result).slice(1);
    return (
      `Level on every figure, within noise: ${listing(level.map((summary) => summary.candidate.id))} ` +
      `${level.length > 1 ? "do" : "does"} as well as ${winner.candidate.id}, which is shown first by its id alone; any of them will do.`
    );
  }
  const criteria = winner.survivesAll ? QUALIFYING_ORDER : OTHERS_ORDER;
  const index = criteria.findIndex((criterion) => criterion.name === deciding);
  if (deciding === QUALIFIES.name || criteria[index]?.primary === true) return undefined;
  const level = criteria.slice(0, index).filter((criterion) => criterion !== CLIENT_ONLY);
  return (
    `Decided by a tie-break: ${second.candidate.id} is level with it within noise on ${listing(level.map((criterion) => criterion.name))}, ` +
    `and ${deciding} decides.`
  );
}

/** Two candidates level on every figure that ranks candidates that qualify, side aside. */
export function levelOnEveryFigure(a: CandidateSummary, b: CandidateSummary): boolean {
  return (
    a.survivesAll === b.survivesAll &&
    order(
      [a, b],
      QUALIFYING_ORDER.filter((criterion) => criterion !== CLIENT_ONLY),
    ).decidedBy[0] === BY_ID
  );
}

/** The first-ranked candidate and those level with it on every figure (ordered by id alone). */
export function levelAtTop(result: Ranking): CandidateSummary[] {
  const end = result.decidedBy.findIndex((criterion) => criterion !== BY_ID);
  return result.ranked.slice(0, end < 0 ? result.ranked.length : end + 1);
}

/** "a, b and c". */
const listing = (items: readonly string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The rule in words, from the criteria the ranking uses, with the listed outages and the SLO. */
export function rankingRule(outagesMs: readonly number[], sloMs: number): string {
  const listed = outagesMs.map((ms) => formatDuration(ms)).join(", ");
  const qualifying = QUALIFYING_ORDER.map((criterion) => criterion.rule.replace("{slo}", formatDuration(sloMs)));
  const others = OTHERS_ORDER.slice(0, 2).map((criterion) => criterion.rule);
  const noisy = [...new Set([...QUALIFYING_ORDER, ...OTHERS_ORDER])].filter((criterion) => criterion.noise !== undefined);
  return (
    `A candidate qualifies when, with every seed, the server recovered (its concurrency came back to the limit within the ` +
    `observation) after each listed outage (${listed}). ${USER_SUCCESS_TEXT} ` +
    `Qualifying candidates rank first: ${qualifying[0]}, then by ${qualifying.slice(1).join(", then ")}, ` +
    `then id. The others follow, by ${others.join(", then ")}, then the same figures from success within the SLO on. ` +
    `${capitalized(listing(noisy.map((criterion) => criterion.name)))} are compared within noise: the best candidate and those within noise of ` +
    `it are level, and the next figure orders them; a difference is noise when it is no larger than either candidate's spread ` +
    `across seeds, or than ${MIN_RELATIVE_DIFFERENCE * 100} % of the larger value (${SUCCESS_NOISE_TEXT}; for latency, at least 1 ms). The first-ranked candidate is the recommendation.`
  );
}

/**
 * The Pareto front of success within the SLO against the longest outage survived (both to be
 * maximized, success compared to 0.01 percentage point): the candidates no other candidate
 * beats on one axis without losing on the other. In ranking order.
 */
export function paretoFront(summaries: readonly CandidateSummary[]): CandidateSummary[] {
  const dominates = (a: CandidateSummary, b: CandidateSummary) =>
    successKey(a) >= successKey(b) && outageKey(a) >= outageKey(b) && (successKey(a) > successKey(b) || outageKey(a) > outageKey(b));
  return rank(summaries.filter((candidate) => !summaries.some((other) => dominates(other, candidate))));
}

export interface RunnerUp {
  readonly summary: CandidateSummary;
  /** Which side of the trade-off it favours. */
  readonly favours: "longer outages" | "success within the SLO" | "next in rank";
}

/**
 * The runner-up that favours the other side of the trade-off: among the Pareto front without
 * the winner, the one that survives the longest outage if it survives a longer one than the
 * winner; otherwise the one with the highest success within the SLO; with no other front
 * member, the second in rank.
 */
export function runnerUp(ranked: readonly CandidateSummary[]): RunnerUp | undefined {
  const winner = ranked[0];
  if (winner === undefined) return undefined;
  const front = paretoFront(ranked).filter((summary) => summary !== winner);
  const longer = front.filter((summary) => outageKey(summary) > outageKey(winner));
  if (longer.length > 0) {
    const best = longer.reduce((a, b) => (outageKey(b) > outageKey(a) ? b : a));
    return { summary: best, favours: "longer outages" };
  }
  if (front.length > 0) {
    const best = front.reduce((a, b) => (successKey(b) > successKey(a) ? b : a));
    return { summary: best, favours: "success within the SLO" };
  }
  const second = ranked[1];
  return second === undefined ? undefined : { summary: second, favours: "next in rank" };
}

export const percent = (rate: number) => `${(rate * 100).toFixed(2)} %`;
export const seconds = (ms: number) => formatDuration(Math.round(ms / 100) * 100);

/** "41.2s", ">= 10m0s" (in prose "at least 10m0s"), "none". */
export function longestText(summary: CandidateSummary, maxOutageMs: number, prose = true): string {
  if (summary.longestIsAtLeast) return `${prose ? "at least" : ">="} ${formatDuration(maxOutageMs)}`;
  if (summary.longestSurvivedMs === 0) return "none";
  return seconds(summary.longestSurvivedMs);
}

/** "250ms", "-" for none. */
export const latencyText = (ms: number | undefined) => (ms === undefined ? "-" : formatDuration(Math.round(ms)));

/** What users feel of a candidate: success within the SLO, and the wait of the requests that needed a retry. */
export function userFigures(summary: CandidateSummary, sloMs: number): string {
  const everyday = summary.everyday;
  const retried =
    everyday.retriedP99Ms === undefined
      ? "no request needed a retry and succeeded"
      : `the requests that needed a retry wait ${latencyText(everyday.retriedP50Ms)} (median) and ${latencyText(everyday.retriedP99Ms)} (p99)`;
  return `${percent(everyday.sloSuccess)} of requests succeed within the SLO of ${formatDuration(sloMs)}, ${retried}, at ${everyday.amplification.toFixed(3)}x amplification`;
}

/** `a` beats `b` on a criterion by more than noise. */
const beats = (criterion: Criterion, a: CandidateSummary, b: CandidateSummary) => {
  const left = criterion.value(a);
  const right = criterion.value(b);
  return (criterion.better === "higher" ? left > right : left < right) && !tied(criterion, a, b);
};

/** Among the candidates that beat `winner` on a criterion by more than noise, the best on it. */
function bestBeating(criterion: Criterion, ranked: readonly CandidateSummary[], winner: CandidateSummary): CandidateSummary | undefined {
  const beating = ranked.filter((summary) => beats(criterion, summary, winner));
  const sign = criterion.better === "higher" ? 1 : -1;
  return beating.length === 0 ? undefined : beating.reduce((a, b) => (sign * (criterion.value(b) - criterion.value(a)) > 0 ? b : a));
}

/** What explanation() says the winner gives up: each figure, the candidates it is compared among, and the sentence. */
const GIVES_UP: readonly {
  readonly criterion: Criterion;
  readonly among: (summary: CandidateSummary, winner: CandidateSummary) => boolean;
  readonly says: (better: CandidateSummary, maxOutageMs: number) => string;
}[] = [
  {
    criterion: SLO_SUCCESS,
    among: () => true,
    says: (better) => {
      const failing = better.outages.find((outage) => !outage.survived);
      return (
        `success within the SLO: ${better.candidate.id} reaches ${percent(better.everyday.sloSuccess)}` +
        (failing === undefined ? "" : `, but its server collapses after the ${formatDuration(failing.outageMs)} outage`)
      );
    },
  },
  {
    criterion: LONGEST,
    among: () => true,
    says: (better, maxOutageMs) =>
      `outage margin: ${better.candidate.id} survives outages up to ${longestText(better, maxOutageMs)}, with ${percent(better.everyday.sloSuccess)} success within the SLO`,
  },
  {
    criterion: RETRIED_P99,
    among: (summary, winner) => summary.survivesAll === winner.survivesAll,
    says: (better) => `the retried requests' wait: ${better.candidate.id} has a p99 of ${latencyText(better.everyday.retriedP99Ms)}`,
  },
  {
    criterion: AMPLIFICATION,
    among: () => true,
    says: (better) => `load: ${better.candidate.id} sends ${better.everyday.amplification.toFixed(3)}x the attempts`,
  },
];

/**
 * The candidates explanation() could name against the winner (ranked first): fixed retry, and the
 * best `count` by value on each figure it compares, beyond noise or not. A measure that runs only
 * some candidates on every seed runs these, so that what the paragraph says rests on every seed
 * wherever the order of those figures does not change with more seeds.
 */
export function explanationCandidates(ranked: readonly CandidateSummary[], count: number): CandidateSummary[] {
  const winner = ranked[0];
  if (winner === undefined) return [];
  const fixed = ranked.filter((summary) => summary.candidate.id === "fixed");
  return [
    ...fixed,
    ...GIVES_UP.flatMap(({ criterion, among }) => {
      // Best first; compared, not subtracted: figures may be ±Infinity.
      const order = (a: number, b: number) => (a === b ? 0 : a > b === (criterion.better === "higher") ? -1 : 1);
      return ranked
        .filter((summary) => summary !== winner && among(summary, winner))
        .sort((a, b) => order(criterion.value(a), criterion.value(b)))
        .slice(0, count);
    }),
  ];
}

/**
 * One paragraph: why the winner wins, and what it gives up against the others (only where
 * another candidate does better by more than noise). Written from the figures, so it says
 * only what the measurements show.
 */
export function explanation(ranked: readonly CandidateSummary[], outagesMs: readonly number[], maxOutageMs: number, sloMs: number): string {
  const winner = ranked[0];
  if (winner === undefined) return "No candidate was measured.";
  const listed = outagesMs.map((ms) => formatDuration(ms)).join(", ");
  const id = winner.candidate.id;
  const everyday = `everyday ${userFigures(winner, sloMs)}`;
  const parts: string[] = [];
  if (winner.survivesAll) {
    const qualifying = ranked.filter((summary) => summary.survivesAll).length;
    parts.push(
      `${id} ranks first: with every seed the server recovered from each listed outage (${listed}), and it survives outages up to ${longestText(winner, maxOutageMs)}; ` +
        `${everyday}; ${qualifying} candidates qualify.`,
    );
  } else {
    parts.push(
      `No candidate survives every listed outage (${listed}). ${id} survives the most (${winner.listedSurvived} of ${outagesMs.length}, and outages up to ${longestText(winner, maxOutageMs)}); ${everyday}.`,
    );
  }
  const fixed = ranked.find((summary) => summary.candidate.id === "fixed");
  if (fixed !== undefined && fixed !== winner) {
    parts.push(`Fixed retry, for comparison, survives outages up to ${longestText(fixed, maxOutageMs)}.`);
  }
  const givesUp = GIVES_UP.flatMap(({ criterion, among, says }) => {
    const better = bestBeating(
      criterion,
      ranked.filter((summary) => among(summary, winner)),
      winner,
    );
    return better === undefined ? [] : [says(better, maxOutageMs)];
  });
  parts.push(
    givesUp.length > 0 ? `It gives up ${givesUp.join("; ")}.` : "Nothing in this grid beats it by more than noise on any of these figures.",
  );
  return parts.join(" ");
}

import { formatDuration } from "../cli/duration.ts";
import type { CandidateSummary } from "./summary.ts";

/*
 * The ranking rule, the Pareto front and the choice of a runner-up: pure functions of the
 * summaries, stated in words by rankingRule() exactly as they are computed here.
 */

/** Success rates are compared to 0.01 percentage point… */
const SUCCESS_RESOLUTION = 1e-4;
/** …amplification to 0.001… */
const AMPLIFICATION_RESOLUTION = 1e-3;
/** …and latency to 1 ms, so that noise below these does not decide. */
const LATENCY_RESOLUTION_MS = 1;

const step = (value: number, resolution: number) => Math.round(value / resolution);
const successKey = (summary: CandidateSummary) => step(summary.everyday.successRate, SUCCESS_RESOLUTION);
const amplificationKey = (summary: CandidateSummary) => step(summary.everyday.amplification, AMPLIFICATION_RESOLUTION);
const latencyKey = (summary: CandidateSummary) =>
  summary.everyday.p99Ms === undefined ? Infinity : step(summary.everyday.p99Ms, LATENCY_RESOLUTION_MS);
/** The longest outage survived, with "at least the longest tried" above any finite figure. */
const outageKey = (summary: CandidateSummary) => (summary.longestIsAtLeast ? Infinity : summary.longestSurvivedMs);

/** Listed outages after which the clients came back too, with every seed (verdict recovered). */
const clientsBackKey = (summary: CandidateSummary) => summary.outages.filter((outage) => outage.verdict === "recovered").length;
/** The clients' recovery times (slowest seed) added over the listed outages they came back from, in ms. */
const clientsBackTotalKey = (summary: CandidateSummary) => summary.outages.reduce((sum, outage) => sum + (outage.clientRecoveryMs ?? 0), 0);

/** Negative when `a` ranks before `b`. */
export function compareCandidates(a: CandidateSummary, b: CandidateSummary): number {
  if (a.survivesAll !== b.survivesAll) return a.survivesAll ? -1 : 1;
  const keys: [number, number][] = a.survivesAll
    ? [
        [successKey(b), successKey(a)],
        [amplificationKey(a), amplificationKey(b)],
        [latencyKey(a), latencyKey(b)],
        [outageKey(b), outageKey(a)],
        [clientsBackKey(b), clientsBackKey(a)],
        [clientsBackTotalKey(a), clientsBackTotalKey(b)],
      ]
    : [
        [b.listedSurvived, a.listedSurvived],
        [outageKey(b), outageKey(a)],
        [successKey(b), successKey(a)],
        [clientsBackKey(b), clientsBackKey(a)],
        [clientsBackTotalKey(a), clientsBackTotalKey(b)],
      ];
  for (const [left, right] of keys) {
    if (left !== right) return left < right ? -1 : 1;
  }
  return a.candidate.id < b.candidate.id ? -1 : a.candidate.id > b.candidate.id ? 1 : 0;
}

export function rank(summaries: readonly CandidateSummary[]): CandidateSummary[] {
  return [...summaries].sort(compareCandidates);
}

export function rankingRule(outagesMs: readonly number[]): string {
  const listed = outagesMs.map((ms) => formatDuration(ms)).join(", ");
  return (
    `A candidate qualifies when, with every seed, the server recovered (its concurrency came back to the limit within the ` +
    `observation) after each listed outage (${listed}). Qualifying candidates rank first, by everyday success rate ` +
    `(higher first, compared to 0.01 percentage point), then retry amplification (lower first, to 0.001), then p99 latency of ` +
    `successful requests (lower first, to 1 ms), then the longest outage survived (longer first), then the number of listed ` +
    `outages after which the clients came back too (more first), then the clients' recovery times added over those outages ` +
    `(shorter first), then id. The others follow, by the number of listed outages survived, then the longest outage survived, ` +
    `then everyday success rate, then the same two client-recovery keys, then id.`
  );
}

/**
 * The Pareto front of everyday success rate against the longest outage survived (both to be
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
  readonly favours: "longer outages" | "everyday success" | "next in rank";
}

/**
 * The runner-up that favours the other side of the trade-off: among the Pareto front without
 * the winner, the one that survives the longest outage if it survives a longer one than the
 * winner; otherwise the one with the highest everyday success rate; with no other front
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
    return { summary: best, favours: "everyday success" };
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

/**
 * One paragraph: why the winner wins, and what it gives up against the others. Written from
 * the figures, so it says only what the measurements show.
 */
export function explanation(ranked: readonly CandidateSummary[], outagesMs: readonly number[], maxOutageMs: number): string {
  const winner = ranked[0];
  if (winner === undefined) return "No candidate was measured.";
  const listed = outagesMs.map((ms) => formatDuration(ms)).join(", ");
  const id = winner.candidate.id;
  const everyday = `everyday it delivers ${percent(winner.everyday.successRate)} success at ${winner.everyday.amplification.toFixed(3)}x amplification${
    winner.everyday.p99Ms === undefined ? "" : ` with a p99 of ${formatDuration(Math.round(winner.everyday.p99Ms))}`
  }`;
  const parts: string[] = [];
  if (winner.survivesAll) {
    const qualifying = ranked.filter((summary) => summary.survivesAll).length;
    parts.push(
      `${id} ranks first: with every seed the server recovered from each listed outage (${listed}), and it survives outages up to ${longestText(winner, maxOutageMs)}; ` +
        `${everyday}, the best of the ${qualifying} candidates that qualify.`,
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
  const givesUp: string[] = [];
  const moreSuccess = ranked.filter((summary) => successKey(summary) > successKey(winner));
  if (moreSuccess.length > 0) {
    const best = moreSuccess.reduce((a, b) => (successKey(b) > successKey(a) ? b : a));
    const failing = best.outages.find((outage) => !outage.survived);
    givesUp.push(
      `everyday success: ${best.candidate.id} reaches ${percent(best.everyday.successRate)}` +
        (failing === undefined ? "" : `, but its server collapses after the ${formatDuration(failing.outageMs)} outage`),
    );
  }
  const longer = ranked.filter((summary) => outageKey(summary) > outageKey(winner));
  if (longer.length > 0) {
    const best = longer.reduce((a, b) => (outageKey(b) > outageKey(a) ? b : a));
    givesUp.push(
      `outage margin: ${best.candidate.id} survives outages up to ${longestText(best, maxOutageMs)}, at ${percent(best.everyday.successRate)} everyday success`,
    );
  }
  const qualifying = ranked.filter((summary) => summary.survivesAll === winner.survivesAll && summary.everyday.p99Ms !== undefined);
  if (winner.everyday.p99Ms !== undefined && qualifying.length > 0) {
    const fastest = qualifying.reduce((a, b) => (latencyKey(b) < latencyKey(a) ? b : a));
    if (latencyKey(fastest) < latencyKey(winner)) {
      givesUp.push(`latency: ${fastest.candidate.id} has a p99 of ${formatDuration(Math.round(fastest.everyday.p99Ms!))}`);
    }
  }
  const lessAmplification = ranked.filter((summary) => amplificationKey(summary) < amplificationKey(winner));
  if (lessAmplification.length > 0) {
    const best = lessAmplification.reduce((a, b) => (amplificationKey(b) < amplificationKey(a) ? b : a));
    givesUp.push(`load: ${best.candidate.id} sends ${best.everyday.amplification.toFixed(3)}x the attempts`);
  }
  parts.push(givesUp.length > 0 ? `It gives up ${givesUp.join("; ")}.` : "Nothing in this grid beats it on any of these figures.");
  return parts.join(" ");
}

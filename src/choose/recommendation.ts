import { FIXED } from "../recommend/candidates.ts";
import { formatDuration } from "../cli/duration.ts";
import { levelOnEveryFigure, longestText, percent, type Ranking, userFigures } from "../recommend/ranking.ts";
import { settingsToArgs } from "../recommend/settings.ts";
import { protoDuration } from "../recommend/snippets.ts";
import { type Stability, stabilityText } from "./stability.ts";
import type { CandidateSummary } from "../recommend/summary.ts";

/*
 * The words of the recommendation, from the ranking: the first line names what to configure,
 * on the side that matters, with the figures users feel and how sure the answer is; then what
 * a reader needs before deploying it (a wait that defeats the SLO or would surprise), and what
 * the other side could add.
 */

/** A first-wait setting from this long on reads as a mistake to whoever meets it in a configuration. */
export const SURPRISING_WAIT_MS = 10_000;

export interface FirstWait {
  /** The first retry's mean wait. */
  readonly meanMs: number;
  /** The first-wait setting a configuration would carry (gRPC's initialBackoff). */
  readonly settingMs: number;
}

export interface RecommendationInput {
  readonly ranking: Ranking;
  readonly outagesMs: readonly number[];
  readonly maxOutageMs: number;
  readonly sloMs: number;
  readonly stability: Stability | undefined;
  readonly firstWaitOf: (summary: CandidateSummary) => FirstWait;
}

const args = (settings: CandidateSummary["candidate"]["client"]) => settingsToArgs(settings).join(" ") || "(no flags)";

/** The first line: what to configure, on which side, the figures users feel, how sure. */
export function headline(input: RecommendationInput): string {
  const winner = input.ranking.ranked[0];
  if (winner === undefined) return "No candidate was measured.";
  const listed = input.outagesMs.map((ms) => formatDuration(ms)).join(", ");
  const candidate = winner.candidate;
  const figures = `Everyday ${userFigures(winner, input.sloMs)}.`;
  const sure = input.stability === undefined ? " Stability not measured (-stability-seeds 0)." : ` ${stabilityText(input.stability)}`;
  if (candidate.lever !== "default") {
    const lead = winner.survivesAll
      ? `No client-only policy survives every listed outage (${listed}): the lever is on the server.`
      : `No candidate survives every listed outage (${listed}), not even with a server lever; the best is a pair.`;
    return (
      `${lead} Configure the server: ${args(candidate.server)}; with the clients: ${args(candidate.client)} (${candidate.clientId}). ` +
      `${figures}${sure}`
    );
  }
  const lead = winner.survivesAll
    ? `Configure the clients: ${args(candidate.client)} (${candidate.id}: ${candidate.summary}); the server needs no change.`
    : `No candidate survives every listed outage (${listed}); the best, ${candidate.id}, survives ${winner.listedSurvived} of ${input.outagesMs.length}: ` +
      `configure the clients: ${args(candidate.client)}.`;
  return `${lead} ${figures}${sure}`;
}

/** A first wait users can live with: within the SLO on average, and no setting of tens of seconds. */
const deployable = (wait: FirstWait, sloMs: number) => wait.meanMs <= sloMs && wait.settingMs < SURPRISING_WAIT_MS;

/** The best candidate after the winner whose first wait users can live with, named when the winner's cannot; undefined for none. */
export function deployableAlternative(
  ranked: readonly CandidateSummary[],
  firstWaitOf: (summary: CandidateSummary) => FirstWait,
  sloMs: number,
): CandidateSummary | undefined {
  return ranked.slice(1).find((summary) => deployable(firstWaitOf(summary), sloMs));
}

/** The best pair with a server lever: what serverAddition says a lever would add to a client-only winner. */
export const bestPair = (ranked: readonly CandidateSummary[]): CandidateSummary | undefined =>
  ranked.find((summary) => summary.candidate.lever !== "default");

/**
 * When the winner's first retry waits longer than the SLO, or its configuration would carry a
 * first wait of tens of seconds: the sentence that says so and why, and the best candidate
 * without that property beside it.
 */
export function deployability(input: RecommendationInput): string | undefined {
  const [winner] = input.ranking.ranked;
  if (winner === undefined) return undefined;
  const wait = input.firstWaitOf(winner);
  if (deployable(wait, input.sloMs)) return undefined;
  const facts: string[] = [];
  if (wait.meanMs > input.sloMs) {
    facts.push(
      `its first retry waits ${formatDuration(Math.round(wait.meanMs))} on average, longer than the SLO of ${formatDuration(input.sloMs)}, ` +
        `so a request whose first try fails cannot succeed in time for its user`,
    );
  }
  if (wait.settingMs >= SURPRISING_WAIT_MS) {
    facts.push(
      `its configuration carries a first wait of ${formatDuration(Math.round(wait.settingMs))} (gRPC initialBackoff ${protoDuration(wait.settingMs)}), ` +
        `tens of seconds where a reader expects milliseconds: write down why beside it`,
    );
  }
  const reason =
    `Before deploying ${winner.candidate.id}: ${facts.join("; and ")}. That wait is the point of it: retries stay away while the ` +
    `server recovers, and the users whose first try fails pay for it.`;
  const alternative = deployableAlternative(input.ranking.ranked, input.firstWaitOf, input.sloMs);
  if (alternative === undefined) return `${reason} No candidate measured here avoids it.`;
  const failing = alternative.outages.find((outage) => !outage.survived);
  return (
    `${reason} The best candidate without it is ${alternative.candidate.id} (rank ${input.ranking.ranked.indexOf(alternative) + 1}): everyday ${userFigures(alternative, input.sloMs)}, ` +
    `outages survived up to ${longestText(alternative, input.maxOutageMs)}` +
    (failing === undefined ? "." : `, but its server does not come back after the ${formatDuration(failing.outageMs)} outage.`)
  );
}

/** For a client-only recommendation, what the best pair with a server lever would add. */
export function serverAddition(input: RecommendationInput): string | undefined {
  const winner = input.ranking.ranked[0];
  const pair = bestPair(input.ranking.ranked);
  if (winner === undefined || pair === undefined || winner.candidate.lever !== "default") return undefined;
  if (levelOnEveryFigure(winner, pair)) {
    return (
      `The server's levers add nothing this run measures: with the best, ${pair.candidate.id} (server: ${args(pair.candidate.server)}), ` +
      `every figure is level with the clients' alone (outages survived up to ${longestText(pair, input.maxOutageMs)}).`
    );
  }
  return (
    `What the best server lever would add: ${pair.candidate.id} (server: ${args(pair.candidate.server)}) survives outages up to ` +
    `${longestText(pair, input.maxOutageMs)} (the clients alone: ${longestText(winner, input.maxOutageMs)}); everyday ${userFigures(pair, input.sloMs)}.`
  );
}

/** The halves of a pair, as measured among `summaries`: its client policy alone, its server lever with fixed retry, and neither. */
export function halvesOf(pair: CandidateSummary, summaries: readonly CandidateSummary[]) {
  const find = (clientId: string, lever: string) =>
    summaries.find((summary) => summary.candidate.clientId === clientId && summary.candidate.lever === lever);
  return {
    clientAlone: find(pair.candidate.clientId, "default"),
    leverAlone: find(FIXED, pair.candidate.lever),
    neither: find(FIXED, "default"),
  };
}

/** What each half of a recommended pair contributes: its client policy alone, its server lever alone, and both (a pair only). */
export function halves(winner: CandidateSummary, summaries: readonly CandidateSummary[], maxOutageMs: number): string {
  const { clientAlone, leverAlone, neither } = halvesOf(winner, summaries);
  const describe = (label: string, summary: CandidateSummary | undefined) =>
    summary === undefined
      ? `${label}: not measured`
      : `${label} (${summary.candidate.id}): survives ${summary.listedSurvived} of ${summary.outages.length} listed outages and outages up to ` +
        `${longestText(summary, maxOutageMs)}, ${percent(summary.everyday.sloSuccess)} success within the SLO`;
  return (
    `What each half contributes: ${describe("the client policy alone, on your server as it is", clientAlone)}; ` +
    `${describe("the server lever alone, with fixed retry", leverAlone)}; ` +
    `${describe("both", winner)}; ${describe("neither (fixed retry on your server)", neither)}.`
  );
}

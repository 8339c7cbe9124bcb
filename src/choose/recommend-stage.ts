import type { SimulationConfig } from "../config/simulation-config.ts";
import { type Candidate } from "../recommend/candidates.ts";
import { type ChooseOptions } from "../options/choose.ts";
import {
  explanation,
  longestText,
  paretoFront,
  type Ranking,
  ranking,
  rankingRule,
  type RunnerUp,
  runnerUp,
  tieBreak,
  userFigures,
} from "../recommend/ranking.ts";
import { deployability, headline, type RecommendationInput, serverAddition } from "./recommendation.ts";
import { settingsToArgs, systemSettings } from "../recommend/settings.ts";
import { type Snippet, snippetsFor } from "../recommend/snippets.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import { firstWaitOf, intentFor, type Measurement } from "./measure-stage.ts";
import { halves } from "./recommendation.ts";

/*
 * choose's rank and recommend stages: the ranking rule applied to what was measured, then the
 * winner in words, with its runner-up, what each half of a pair adds and its settings elsewhere.
 */

/** The rank stage: the ranking and what the tables say of it. */
export interface Ranked {
  readonly result: Ranking;
  readonly ranked: readonly CandidateSummary[];
  readonly winner: CandidateSummary;
  readonly second: RunnerUp | undefined;
  readonly front: CandidateSummary[];
  readonly rule: string;
  readonly why: string;
}

/** The recommend stage: its paragraphs (the headline first), the winner's snippets, and each candidate's ./sim command. */
export interface Advice {
  readonly recommendation: string[];
  readonly snippets: Snippet[];
  readonly commands: Map<string, string>;
  readonly tie: string | undefined;
  readonly caution: string | undefined;
  readonly contributions: string | undefined;
}

/** The rank stage: the ranking rule applied, the runner-up, the Pareto front, and why the winner won. */
export function rankOf(summaries: readonly CandidateSummary[], options: ChooseOptions): Ranked {
  const result = ranking(summaries);
  const ranked = result.ranked;
  return {
    result,
    ranked,
    winner: ranked[0]!,
    second: runnerUp(ranked),
    front: paretoFront(ranked),
    rule: rankingRule(options.outagesMs, options.sloMs),
    why: explanation(ranked, options.outagesMs, options.own["max-outage"], options.sloMs),
  };
}

/** The recommend stage: the winner in words, with its runner-up, what each half of a pair adds, and its settings elsewhere. */
export function recommend(
  options: ChooseOptions,
  measured: Measurement,
  { result, ranked, winner, second, why }: Ranked,
  configs: ReadonlyMap<string, SimulationConfig>,
): Advice {
  const own = options.own;
  const intent = intentFor(configs);
  const words: RecommendationInput = {
    ranking: result,
    outagesMs: options.outagesMs,
    maxOutageMs: own["max-outage"],
    sloMs: options.sloMs,
    stability: measured.stability,
    firstWaitOf: firstWaitOf(configs),
  };
  const contributions =
    winner.candidate.lever === "default" ? serverAddition(words) : halves(winner, measured.summaries, own["max-outage"]);
  const snippets = snippetsFor(intent(winner));
  const commands = new Map(ranked.map((summary) => [summary.candidate.id, simCommand(options.system, summary.candidate)]));
  const tie = tieBreak(result);
  const caution = deployability(words);
  const recommendation = [
    headline(words),
    `Run it: ${commands.get(winner.candidate.id)}`,
    ...(tie === undefined ? [] : [tie]),
    ...(caution === undefined ? [] : [caution]),
    why,
    second === undefined
      ? "There is no runner-up."
      : `Runner-up, favouring ${second.favours}: ${second.summary.candidate.id}, survives outages up to ${longestText(second.summary, own["max-outage"])}; ` +
        `everyday ${userFigures(second.summary, options.sloMs)}.`,
    ...(contributions === undefined ? [] : [contributions]),
  ];
  return { recommendation, snippets, commands, tie, caution, contributions };
}

/** The ./sim command that reproduces a candidate on the user's system (with the demo's 20 s outage). */
function simCommand(system: Readonly<Record<string, unknown>>, candidate: Candidate): string {
  return [
    "./sim",
    ...settingsToArgs(systemSettings(system)),
    ...settingsToArgs(candidate.client),
    ...settingsToArgs(candidate.server),
  ].join(" ");
}

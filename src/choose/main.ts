import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import {
  buildGrid,
  type Measured,
  measureAll,
  firstSeedTimelines,
  measurePlan,
  MIN_OUTAGE_MS,
  ScreenedMeasure,
  toConfig,
} from "../recommend/grid-measure.ts";
import { defaultLauncher, type Launcher } from "../runtime/launcher.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { renderSvg } from "../report/report.ts";
import { WorkerPool } from "../runtime/worker-pool.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import { type Candidate, FIXED, NO_RETRIES, pair, type ServerLever, serverLevers } from "../recommend/candidates.ts";
import type { MeasurePlan } from "../recommend/measure.ts";
import { checkFaultTiers } from "../config/simulation.ts";
import { CHOOSE_FLAGS, CHOOSE_TARGET, type ChooseOptions, parseChooseArgs, STABILITY_TOP } from "./options.ts";
import { scheduleText } from "../recommend/measure-options.ts";
import { blamingScenarioFile, withScenarioFile } from "../scenario-file/arguments.ts";
import type { ScenarioSource } from "../report/html.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import {
  explanation,
  explanationCandidates,
  longestText,
  paretoFront,
  percent,
  rank,
  type Ranking,
  ranking,
  rankingRule,
  type RunnerUp,
  runnerUp,
  tieBreak,
  userFigures,
} from "../recommend/ranking.ts";
import {
  bestPair,
  deployability,
  deployableAlternative,
  type FirstWait,
  headline,
  type RecommendationInput,
  serverAddition,
} from "./recommendation.ts";
import { type Stability, stability } from "./stability.ts";
import {
  outageDetails,
  paretoSpec,
  TABLE_LEGEND,
  rankedTable,
  jsonNumbers,
  reportHtml,
  type Timeline,
  timelineSpec,
  type Validation,
} from "../recommend/report.ts";
import { settingsToArgs, systemSettings } from "../recommend/settings.ts";
import { firstWait, intentOf, type Snippet, snippetsFor, snippetText } from "../recommend/snippets.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import { chooseChain } from "./chain.ts";
import { checkValidateAgainst, validateTop } from "./validate.ts";

/*
 * `thundering-herd choose`: ranks retry policies for the user's own system. Every candidate
 * (src/recommend/candidates.ts) is measured in the simulator with several seeds on every core:
 * success within the SLO, the retried requests' wait and amplification, each listed outage,
 * and the longest outage survived. The ranking rule, the Pareto front, a recommendation with its runner-up, and the
 * winner's settings for gRPC, Envoy, the AWS SDKs, cockatiel, p-retry and our own library.
 */

/** The best this many on each figure the answer's paragraph compares the winner on run every seed (-screen-top). */
const EXPLANATION_RIVALS = 3;
/** How many client policies, besides the baselines, are paired with each server lever. */
const SERVER_SIDE_TOP = 5;
/** Candidates whose timelines the report overlays (with fixed retry). */
const TIMELINE_TOP = 3;
/** The candidates whose first seed's timelines the report overlays: the top ones and fixed retry. */
const timelineIds = (ranked: readonly CandidateSummary[]): string[] => {
  const shown = ranked.slice(0, TIMELINE_TOP).map((summary) => summary.candidate.id);
  return shown.includes(FIXED) ? shown : [...shown, FIXED];
};

export interface ChooseDependencies {
  /** Starts ./server and ./client for -validate. */
  readonly launcher?: Launcher;
}

/** What the measure stage found: every candidate's summary over the seeds, the first seed's timelines, and the stability count. */
interface Measurement {
  readonly summaries: CandidateSummary[];
  readonly timelines: Map<string, Timeline[]>;
  /** The server levers paired with client policies (none without levers). */
  readonly pairs: Measured[];
  readonly stability: Stability | undefined;
}

/** A candidate's retry intent (its policy and timeout on the user's system), from its simulator configuration. */
const intentFor = (configs: ReadonlyMap<string, SimulationConfig>) => (summary: CandidateSummary) => {
  const config = configs.get(summary.candidate.id)!;
  return intentOf(summary.candidate.id, config.retry, config.timeoutMs, summary.candidate.client, summary.candidate.server);
};

const firstWaitOf = (configs: ReadonlyMap<string, SimulationConfig>) => {
  const intent = intentFor(configs);
  return (summary: CandidateSummary) => firstWait(intent(summary));
};

/** How far down the ranking every candidate runs every seed: -screen-top, and at least the stability count's and -validate's top. */
function screenTop(options: ChooseOptions): number {
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

/** The rank stage: the ranking and what the tables say of it. */
interface Ranked {
  readonly result: Ranking;
  readonly ranked: readonly CandidateSummary[];
  readonly winner: CandidateSummary;
  readonly second: RunnerUp | undefined;
  readonly front: CandidateSummary[];
  readonly rule: string;
  readonly why: string;
}

/** The recommend stage: its paragraphs (the headline first), the winner's snippets, and each candidate's ./sim command. */
interface Advice {
  readonly recommendation: string[];
  readonly snippets: Snippet[];
  readonly commands: Map<string, string>;
  readonly tie: string | undefined;
  readonly caution: string | undefined;
  readonly contributions: string | undefined;
}

/** What the stages found, for the files the render stage writes. */
interface Outcome {
  readonly measured: Measurement;
  readonly ranked: Ranked;
  readonly advice: Advice;
  readonly validation: Validation | undefined;
  readonly skipped: readonly string[];
}

/** Stages: measure every candidate in the simulator, rank them, recommend the winner, render the answer (and -validate it). */
export async function main(argv: readonly string[], io: ProgramIo, dependencies: ChooseDependencies = {}): Promise<number> {
  const { argv: args, scenario } = await withScenarioFile(argv, CHOOSE_TARGET, io.stderr);
  const commandLine = args.slice(scenario?.tokens.length ?? 0);
  const parsed = await blamingScenarioFile(scenario, commandLine, CHOOSE_FLAGS, async () => {
    const parsed = parseChooseArgs(args);
    // One server has no tiers: a fault naming one is refused as ./sim refuses it, never run on the server.
    if (parsed.kind === "run" && scenario?.tiers === undefined) checkFaultTiers(parsed.options.schedules?.flat() ?? [], []);
    return parsed;
  });
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const options = parsed.options;
  if (scenario?.tiers !== undefined) return chooseChain(options, scenario, io);
  const own = options.own;
  // The user's system is checked by the simulator's own rules before anything runs.
  const baseConfig = toConfig(options.system, {}, {});
  if (own["print-scenario"]) {
    const { printScenario } = await import("../scenario-file/print.ts");
    io.stdout.write(await printScenario(CHOOSE_TARGET, { ...options.system, ...own }, {}, scenario?.metadata));
    return 0;
  }
  const skipped: string[] = [];
  const grid = buildGrid(options, skipped);
  const plan = measurePlan(options);
  // Your service has none of ./server's levers: with -target, client policies only.
  const levers =
    own["client-only"] || options.target !== undefined
      ? []
      : serverLevers(baseConfig.latency, baseConfig.timeoutMs, baseConfig.model).slice(1);
  if (own.list) {
    io.stdout.write(
      listing(
        grid,
        skipped,
        levers.map((lever) => lever.id),
        options,
        plan,
      ),
    );
    return 0;
  }
  checkValidateAgainst(
    options,
    grid.map((entry) => entry.candidate.id),
  );
  // A service -validate cannot play is refused now, not after minutes of measuring.
  await options.target?.preflight();
  announce(options, grid, levers, io);

  const measured = await measure(options, plan, grid, levers, skipped, io);
  const ranked = rankOf(measured.summaries, options);
  const configs = new Map([...grid, ...measured.pairs].map((entry) => [entry.candidate.id, entry.config]));
  const advice = recommend(options, measured, ranked, configs);
  if (!own.json) renderText(options, ranked, advice, io);
  const validation = own.validate
    ? await validateTop(options, measured.summaries, ranked.ranked, configs, io, dependencies.launcher ?? defaultLauncher())
    : undefined;
  if (validation === "interrupted") return 130;

  await renderFiles(options, scenario, { measured, ranked, advice, validation, skipped }, io);
  return validation?.failure === undefined ? 0 : 1;
}

/** What choose is about to measure, on stderr. */
function announce(options: ChooseOptions, grid: readonly Measured[], levers: readonly { readonly id: string }[], io: ProgramIo): void {
  io.stderr.write(
    `choose: ${grid.length} candidates x ${options.seeds.length} seeds on ${options.parallel} worker threads; outages ${options.outagesMs.map((ms) => formatDuration(ms)).join(", ")}; ` +
      `SLO ${formatDuration(options.sloMs)}${levers.length > 0 ? `; then server levers ${levers.map((lever) => lever.id).join(", ")}` : ""}\n` +
      faultsListing(options)
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => `choose: ${line}\n`)
        .join(""),
  );
}

/** The measure stage: the client grid, then the server levers paired with client policies, then the top candidates on more seeds. */
async function measure(
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

/** The rank stage: the ranking rule applied, the runner-up, the Pareto front, and why the winner won. */
function rankOf(summaries: readonly CandidateSummary[], options: ChooseOptions): Ranked {
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
function recommend(
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

/** The render stage, as text on stdout: the answer first (what to configure, on which side, with the figures users feel and how sure). */
function renderText(options: ChooseOptions, { ranked, winner, second, front, rule }: Ranked, advice: Advice, io: ProgramIo): void {
  const recommendation = advice.recommendation;
  io.stdout.write(`${recommendation[0]}\n\n`);
  io.stdout.write(`${rankedTable(ranked, options.own["max-outage"])}\n\n`);
  io.stdout.write(`Ranking rule: ${rule}\n`);
  io.stdout.write(`${TABLE_LEGEND}${screenedText(ranked, options)}\n${faultsListing(options)}\n`);
  io.stdout.write(
    `Pareto front (success within the SLO vs longest outage survived): ${front.map((summary) => summary.candidate.id).join(", ")}\n\n`,
  );
  for (const paragraph of recommendation.slice(1)) io.stdout.write(`${paragraph}\n\n`);
  const detailed = [winner, second?.summary, ranked.find((summary) => summary.candidate.id === FIXED)].filter(
    (summary, index, all): summary is CandidateSummary => summary !== undefined && all.indexOf(summary) === index,
  );
  io.stdout.write(`${outageDetails(detailed)}\n\n`);
  io.stdout.write(`The winner's settings for other systems:\n\n`);
  for (const snippet of advice.snippets) io.stdout.write(snippetText(snippet));
}

/** Which candidates ran the first seed alone (-screen-top), after the table's legend; nothing when every one ran every seed. */
function screenedText(ranked: readonly CandidateSummary[], options: ChooseOptions): string {
  const screened = ranked.filter((summary) => summary.seeds < options.seeds.length).length;
  return screened === 0
    ? ""
    : ` ${screened} ${screened === 1 ? "candidate" : "candidates"} ran the first seed alone (-screen-top): below the top ${screenTop(options)} ` +
        "and named nowhere in the answer, they show that seed's figures, with no spread, and rank by them (a longest outage survived, " +
        "the shortest over seeds, can only be longer with one).";
}

/** The render stage, as files: summary.json, the report and the snippets in a folder of their own; the answer as JSON with -json. */
async function renderFiles(
  options: ChooseOptions,
  scenario: ScenarioSource | undefined,
  { measured, ranked, advice, validation, skipped }: Outcome,
  io: ProgramIo,
): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = resolve(options.own.out, `choose-${stamp}`);
  const output = summaryOutput(options, scenario, ranked, advice, measured.stability, validation, skipped);
  await writeReport(outDir, output, {
    ranked: ranked.ranked,
    front: ranked.front,
    winner: ranked.winner,
    second: ranked.second?.summary,
    timelines: measured.timelines,
    snippets: advice.snippets,
    validation,
    recommendation: advice.recommendation,
    rule: ranked.rule,
    skipped,
    commands: advice.commands,
    options,
    scenario,
  });
  if (options.own.json) io.stdout.write(`${JSON.stringify({ ...output, report: join(outDir, "report.html") }, jsonNumbers, 2)}\n`);
  else io.stdout.write(`\nreport: ${join(outDir, "report.html")}\n`);
}

/** The render stage, as data: summary.json, and the whole of -json's answer but the report's path. */
function summaryOutput(
  options: ChooseOptions,
  scenario: ScenarioSource | undefined,
  { result, ranked, winner, second, front, rule, why }: Ranked,
  { recommendation, snippets, commands, tie, caution, contributions }: Advice,
  stabilityRuns: Stability | undefined,
  validation: Validation | undefined,
  skipped: readonly string[],
) {
  const own = options.own;
  return {
    settings: {
      system: systemSettings(options.system),
      seeds: options.seeds,
      screenTop: own["screen-top"],
      stabilitySeeds: options.stabilitySeeds,
      outagesMs: options.outagesMs,
      sloMs: options.sloMs,
      steadyMs: own.steady,
      observeMs: own.observe,
      everydayMs: own.everyday,
      maxOutageMs: own["max-outage"],
      serverSide: own["server-side"],
      clientOnly: own["client-only"],
      ...scenarioSettings(scenario),
    },
    rankingRule: rule,
    ranking: ranked.map((summary, index) => ({
      rank: index + 1,
      ...jsonSummary(summary),
      decidedBy: result.decidedBy[index] ?? null,
      command: commands.get(summary.candidate.id),
    })),
    paretoFront: front.map((summary) => summary.candidate.id),
    recommendation: {
      id: winner.candidate.id,
      headline: recommendation[0],
      tieBreak: tie ?? null,
      deployability: caution ?? null,
      why,
      contributions: contributions ?? null,
    },
    stability: stabilityRuns ?? null,
    runnerUp: second === undefined ? null : { id: second.summary.candidate.id, favours: second.favours },
    snippets,
    validation: validation ?? null,
    skipped,
  };
}

/** The halves of a pair, as measured among `summaries`: its client policy alone, its server lever with fixed retry, and neither. */
function halvesOf(pair: CandidateSummary, summaries: readonly CandidateSummary[]) {
  const find = (clientId: string, lever: string) =>
    summaries.find((summary) => summary.candidate.clientId === clientId && summary.candidate.lever === lever);
  return {
    clientAlone: find(pair.candidate.clientId, "default"),
    leverAlone: find(FIXED, pair.candidate.lever),
    neither: find(FIXED, "default"),
  };
}

/** What each half of a recommended pair contributes: its client policy alone, its server lever alone, and both (a pair only). */
function halves(winner: CandidateSummary, summaries: readonly CandidateSummary[], maxOutageMs: number): string {
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

/** The ./sim command that reproduces a candidate on the user's system (with the demo's 20 s outage). */
function simCommand(system: Readonly<Record<string, unknown>>, candidate: Candidate): string {
  return [
    "./sim",
    ...settingsToArgs(systemSettings(system)),
    ...settingsToArgs(candidate.client),
    ...settingsToArgs(candidate.server),
  ].join(" ");
}

function jsonSummary(summary: CandidateSummary) {
  return {
    id: summary.candidate.id,
    origin: summary.candidate.origin,
    summary: summary.candidate.summary,
    client: summary.candidate.client,
    server: summary.candidate.server,
    seeds: summary.seeds,
    everyday: summary.everyday,
    outages: summary.outages,
    longestSurvivedMs: summary.longestSurvivedMs,
    longestIsAtLeast: summary.longestIsAtLeast,
    survivesAll: summary.survivesAll,
    simulations: summary.simulations,
  };
}

function listing(
  grid: readonly Measured[],
  skipped: readonly string[],
  levers: readonly string[],
  options: ChooseOptions,
  plan: MeasurePlan,
): string {
  const bisection = Math.ceil(Math.log2(Math.log(plan.maxOutageMs / plan.minOutageMs) / Math.log(plan.bisectionRatio))) + 2;
  const perSeed = 1 + plan.outagesMs.length + bisection;
  const lines = grid.map(
    (entry) =>
      `${entry.candidate.id.padEnd(48)} ${entry.candidate.origin.padEnd(9)} ${settingsToArgs({ ...entry.candidate.client, ...entry.candidate.server }).join(" ")}`,
  );
  return (
    `${grid.length} candidates (${grid.filter((entry) => entry.candidate.origin === "baseline").length} baselines):\n${lines.join("\n")}\n` +
    (levers.length > 0
      ? `\nserver levers, paired with the top ${SERVER_SIDE_TOP} and the baselines ` +
        `(${options.own["server-side"] ? "-server-side" : "when no client policy qualifies; otherwise with the winner alone"}): ${levers.join(", ")}\n`
      : "") +
    (skipped.length > 0 ? `\nleft out (the simulator rejects them):\n${skipped.map((entry) => `  ${entry}`).join("\n")}\n` : "") +
    `\nsimulations: at most ${perSeed} per candidate and seed (1 everyday, ${plan.outagesMs.length} outages, at most ${bisection} for the bisection), ` +
    `${options.seeds.length} seeds: at most ${grid.length * options.seeds.length * perSeed} for the client grid; ` +
    `then the top ${STABILITY_TOP} on ${options.stabilitySeeds.length} more seeds\n` +
    `SLO ${formatDuration(options.sloMs)}: success within it is measured in the everyday run\n` +
    faultsListing(options)
  );
}

/** The fault schedules that replace the listed outages, each under the length the tables show it by; empty without -faults. */
function faultsListing(options: ChooseOptions): string {
  if (options.schedules === undefined) return "";
  const lines = options.schedules.map(
    (schedule, index) => `  ${formatDuration(options.outagesMs[index]!).padEnd(8)} ${scheduleText(schedule)}`,
  );
  return `outages replaced by fault schedules (times from the run's start):\n${lines.join("\n")}\n`;
}

interface ReportInput {
  readonly ranked: readonly CandidateSummary[];
  readonly front: readonly CandidateSummary[];
  readonly winner: CandidateSummary;
  readonly second: CandidateSummary | undefined;
  readonly timelines: ReadonlyMap<string, Timeline[]>;
  readonly snippets: readonly Snippet[];
  readonly validation: Validation | undefined;
  readonly recommendation: readonly string[];
  readonly rule: string;
  readonly skipped: readonly string[];
  readonly commands: ReadonlyMap<string, string>;
  readonly options: ChooseOptions;
  readonly scenario: ScenarioSource | undefined;
}

async function writeReport(outDir: string, result: object, input: ReportInput): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const named = new Map<string, string>([
    [input.winner.candidate.id, `winner: ${input.winner.candidate.id}`],
    [FIXED, FIXED],
    [NO_RETRIES, NO_RETRIES],
  ]);
  if (input.second !== undefined) named.set(input.second.candidate.id, `runner-up: ${input.second.candidate.id}`);
  const paretoSvg = await renderSvg(paretoSpec(input.ranked, input.front, named, input.options.own["max-outage"]));
  const shown = timelineIds(input.ranked);
  const timelineSvgs: string[] = [];
  for (const [index] of input.options.outagesMs.entries()) {
    const series = shown.map((id) => input.timelines.get(id)?.[index]).filter((timeline): timeline is Timeline => timeline !== undefined);
    if (series.length > 0) timelineSvgs.push(await renderSvg(timelineSpec(series)));
  }
  writeFileSync(join(outDir, "pareto.svg"), paretoSvg);
  for (const snippet of input.snippets) writeFileSync(join(outDir, snippet.file), snippet.text);
  writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(result, jsonNumbers, 2)}\n`);
  const settings = [
    `system: ${settingsToArgs(systemSettings(input.options.system)).join(" ") || "the simulator's defaults (the article's system)"}`,
    `seeds ${input.options.seeds.join(", ")}; steady ${formatDuration(input.options.own.steady)}, observe ${formatDuration(input.options.own.observe)}, ` +
      `everyday run ${formatDuration(input.options.own.everyday)}, bisection from ${formatDuration(MIN_OUTAGE_MS)} to ${formatDuration(input.options.own["max-outage"])}`,
    ...(input.options.schedules === undefined ? [] : [faultsListing(input.options).trim().replace(/\n\s*/g, "; ")]),
    ...[screenedText(input.ranked, input.options).trim()].filter((line) => line !== ""),
  ];
  writeFileSync(
    join(outDir, "report.html"),
    reportHtml({
      title: "thundering-herd choose: retry policies for your system",
      settings,
      recommendation: input.recommendation,
      rule: input.rule,
      ranked: input.ranked,
      maxOutageMs: input.options.own["max-outage"],
      paretoSvg,
      timelineSvgs,
      snippets: input.snippets,
      validation: input.validation,
      skipped: input.skipped,
      commands: input.commands,
      scenario: input.scenario,
    }),
  );
}

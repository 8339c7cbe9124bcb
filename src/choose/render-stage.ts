import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { type Measured, MIN_OUTAGE_MS } from "../recommend/grid-measure.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { renderSvg } from "../report/report.ts";
import { FIXED, NO_RETRIES } from "../recommend/candidates.ts";
import type { MeasurePlan } from "../recommend/measure.ts";
import { type ChooseOptions, STABILITY_TOP } from "../options/choose.ts";
import { scheduleText } from "../options/measure.ts";
import type { ScenarioSource } from "../report/html.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import { type Stability } from "./stability.ts";
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
import { type Snippet, snippetText } from "../recommend/snippets.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import { type Measurement, screenTop, SERVER_SIDE_TOP, timelineIds } from "./measure-stage.ts";
import { type Advice, type Ranked } from "./recommend-stage.ts";

/*
 * choose's render stage: the answer as text, as summary.json and -json, as a report with its
 * charts, and the winner's snippets; -list's listing of the grid.
 */

/** What the stages found, for the files the render stage writes. */
export interface Outcome {
  readonly measured: Measurement;
  readonly ranked: Ranked;
  readonly advice: Advice;
  readonly validation: Validation | undefined;
  readonly skipped: readonly string[];
}

/** The render stage, as text on stdout: the answer first (what to configure, on which side, with the figures users feel and how sure). */
export function renderText(options: ChooseOptions, { ranked, winner, second, front, rule }: Ranked, advice: Advice, io: ProgramIo): void {
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
export async function renderFiles(
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

export function listing(
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
export function faultsListing(options: ChooseOptions): string {
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

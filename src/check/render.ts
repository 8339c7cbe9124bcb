import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createTwoFilesPatch } from "diff";
import { formatDuration } from "../cli/duration.ts";
import type { CheckOptions } from "../options/check.ts";
import { longestText, rankingRule } from "../recommend/ranking.ts";
import {
  EVERYDAY_HEADER,
  everydayCells,
  jsonNumbers,
  outageDetails,
  rankedTable,
  TABLE_LEGEND,
  type Timeline,
  timelineSpec,
} from "../recommend/report.ts";
import { type FlagSettings, settingsToArgs, systemSettings } from "../recommend/settings.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import { escapeHtml, PAGE_STYLE, type ScenarioSource, scenarioSection } from "../report/html.ts";
import { renderSvg } from "../report/report.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import { textTable as table } from "../report/text-table.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { PolicyReading } from "./format.ts";
import { type Grade, gradeLines, gradeOf, type Measured } from "./grade.ts";
import type { CheckInput } from "./input.ts";
import type { Unwritable } from "./variants.ts";

/** What check found for one policy of the file. */
export interface PolicyOutcome {
  readonly reading: PolicyReading;
  readonly summary: CandidateSummary;
  readonly grade: Grade;
  /** The smallest change that qualifies; undefined when the policy qualifies as it is, or when nothing tried did. */
  readonly smallest: Measured | undefined;
  readonly tried: readonly Measured[];
  readonly unwritable: readonly Unwritable[];
}

export interface CheckOutcome {
  readonly options: CheckOptions;
  readonly input: CheckInput;
  /** choose's candidates and the user's policies, by choose's ranking rule. */
  readonly ranked: readonly CandidateSummary[];
  /** choose's first: the first of its own candidates, never one of the file's policies. */
  readonly first: CandidateSummary;
  readonly policies: readonly PolicyOutcome[];
  readonly timelines: ReadonlyMap<string, Timeline[]>;
  readonly skipped: readonly string[];
}

/** The rows of choose's ranking printed on stdout, besides the user's. */
const RANKS_SHOWN = 10;

export const flags = (settings: FlagSettings) => settingsToArgs(settings).join(" ");

/** The reading field by field: the file's words, ours, and the source; where ours differs, said under the table. */
export function fieldTable(reading: PolicyReading, sources: readonly string[]): string {
  const rows = reading.fields.map((field) => [
    field.field,
    field.value,
    Object.keys(field.settings).length === 0 ? "-" : flags(field.settings),
    `[${sources.indexOf(field.source) + 1}]`,
  ]);
  const differences = reading.fields
    .filter((field) => field.approximation !== undefined)
    .map((field) => `where ours differs, ${field.field}: ${field.approximation}`);
  return [table([["field", "value", "our model", "source"], ...rows]).trimEnd(), ...differences].join("\n");
}

/** The diff of the user's file, in its own words, as `diff -u` prints it. */
export function fileDiff(input: CheckInput, changed: string): string {
  return createTwoFilesPatch(input.file, input.file, input.text, changed, "as it is", "the change that qualifies", { context: 2 });
}

/** Every source the readings cite, once, in the order first cited: the numbers the field tables give. */
export function sourcesOf(policies: readonly { readonly reading: PolicyReading }[]): string[] {
  return [...new Set(policies.flatMap((policy) => policy.reading.fields.map((field) => field.source)))];
}

/** How check read one policy: its name and format, our flags, the fields one by one, and what it does not model. */
export function readingLines(input: CheckInput, reading: PolicyReading, sources: readonly string[]): string[] {
  return [
    `${input.file}: ${reading.name} (${input.format.title})`,
    "",
    `Read as: ${flags(reading.settings)}`,
    fieldTable(reading, sources).trimEnd(),
    ...reading.unmodeled.map((field) => `not modelled: ${field.field} = ${field.value}: ${field.why}`),
  ];
}

/** What to do when the policy does not qualify: the diff with its figures, or why there is none. */
function changeText(outcome: CheckOutcome, policy: PolicyOutcome): string[] {
  const options = outcome.options;
  if (policy.grade.qualifies) return ["No change needed."];
  const smallest = policy.smallest;
  const tried = `${policy.tried.length} changes simulated (one field at a time, and choose's qualifying candidates as your format says them)`;
  if (smallest === undefined) {
    const first = outcome.first;
    return [
      first.survivesAll
        ? `No change tried qualifies: ${tried}. choose's ranking below shows what does; your format may not be able to say it.`
        : `No change tried qualifies (${tried}), and nothing choose tries qualifies on this system either: its first, ${first.candidate.id}, survives outages up to ${longestText(first, options.own["max-outage"])}.`,
    ];
  }
  return [
    `The smallest change to your file that qualifies (${smallest.variant.changedLines} lines; ${tried}): ${smallest.variant.change}.`,
    fileDiff(outcome.input, smallest.variant.text).trimEnd(),
    ...smallest.variant.notes.map((note) => `note: ${note}`),
    `Read back, the file then says: ${flags(smallest.variant.settings)}`,
    `With it: ${gradeLines(gradeOf(smallest.summary), smallest.summary, options.sloMs, options.own["max-outage"]).join("; ")}.`,
  ];
}

/** The answer on stdout: per policy, how it was read, its grade and the smallest change; then choose's ranking, the user's rows in it. */
export function renderText(outcome: CheckOutcome, io: ProgramIo): void {
  const { options, input } = outcome;
  const sources = sourcesOf(outcome.policies);
  const maxOutageMs = options.own["max-outage"];
  for (const policy of outcome.policies) {
    const grade = policy.grade;
    for (const line of readingLines(input, policy.reading, sources)) io.stdout.write(`${line}\n`);
    io.stdout.write(`\nOn your system it ${gradeLines(grade, policy.summary, options.sloMs, maxOutageMs).join("; ")}.\n`);
    io.stdout.write(`Ranked ${grade.rank} of ${grade.of} among choose's candidates; choose's first: ${outcome.first.candidate.id}.\n\n`);
    for (const line of changeText(outcome, policy)) io.stdout.write(`${line}\n`);
    for (const entry of policy.unwritable) io.stdout.write(`not tried: ${entry.change}: ${entry.why}\n`);
    io.stdout.write("\n");
  }
  const shown = outcome.ranked.filter((summary, index) => index < RANKS_SHOWN || summary.candidate.origin === "configuration");
  const first = Math.min(RANKS_SHOWN, outcome.ranked.length);
  io.stdout.write(`The first ${first} of ${outcome.ranked.length} by choose's rule, and yours (the whole ranking is in the report):\n`);
  io.stdout.write(
    `${rankedTable(
      shown,
      maxOutageMs,
      shown.map((summary) => outcome.ranked.indexOf(summary) + 1),
    )}\n\n${TABLE_LEGEND}\n\n`,
  );
  io.stdout.write(`${outageDetails(outcome.policies.map((policy) => policy.summary))}\n\n`);
  io.stdout.write(`Sources:\n${sources.map((source, index) => `  [${index + 1}] ${source}\n`).join("")}`);
}

function policyJson(outcome: CheckOutcome, policy: PolicyOutcome) {
  const smallest = policy.smallest;
  return {
    name: policy.reading.name,
    settings: policy.reading.settings,
    fields: policy.reading.fields,
    unmodeled: policy.reading.unmodeled,
    grade: policy.grade,
    outages: policy.summary.outages,
    smallestChange:
      smallest === undefined
        ? null
        : {
            change: smallest.variant.change,
            changedLines: smallest.variant.changedLines,
            diff: fileDiff(outcome.input, smallest.variant.text),
            settings: smallest.variant.settings,
            notes: smallest.variant.notes,
            grade: gradeOf(smallest.summary),
          },
    tried: policy.tried.map((entry) => ({
      change: entry.variant.change,
      settings: entry.variant.settings,
      changedLines: entry.variant.changedLines,
      qualifies: entry.summary.survivesAll,
      grade: gradeOf(entry.summary),
    })),
    notTried: policy.unwritable,
  };
}

/** summary.json, and the whole of -json's answer but the report's path. */
function outcomeJson(outcome: CheckOutcome, scenario: ScenarioSource | undefined) {
  const { options, input } = outcome;
  return {
    config: { file: input.file, format: input.format.name, title: input.format.title },
    settings: {
      system: systemSettings(options.system),
      seeds: options.seeds,
      outagesMs: options.outagesMs,
      sloMs: options.sloMs,
      ...scenarioSettings(scenario),
    },
    rankingRule: rankingRule(options.outagesMs, options.sloMs),
    policies: outcome.policies.map((policy) => policyJson(outcome, policy)),
    chooseFirst: outcome.first.candidate.id,
    ranking: outcome.ranked.map((summary, index) => ({
      rank: index + 1,
      id: summary.candidate.id,
      client: summary.candidate.client,
      qualifies: summary.survivesAll,
    })),
    sources: sourcesOf(outcome.policies),
    skipped: outcome.skipped,
  };
}

/** The report folder (report.html, summary.json), and -json's answer on stdout. */
export async function renderFiles(outcome: CheckOutcome, scenario: ScenarioSource | undefined, io: ProgramIo): Promise<void> {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = resolve(outcome.options.own.out, `check-${stamp}`);
  mkdirSync(outDir, { recursive: true });
  const json = outcomeJson(outcome, scenario);
  writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(json, jsonNumbers, 2)}\n`);
  writeFileSync(join(outDir, "report.html"), await reportHtml(outcome, scenario));
  if (outcome.options.own.json) io.stdout.write(`${JSON.stringify({ ...json, report: join(outDir, "report.html") }, jsonNumbers, 2)}\n`);
  else io.stdout.write(`report: ${join(outDir, "report.html")}\n`);
}

/** Each listed outage: the user's policy, the smallest change and choose's first, over time (first seed). */
async function timelineSvgs(outcome: CheckOutcome, policy: PolicyOutcome): Promise<string[]> {
  const ids = [policy.summary.candidate.id, policy.smallest?.summary.candidate.id, outcome.first.candidate.id].filter(
    (id, index, all): id is string => id !== undefined && all.indexOf(id) === index,
  );
  const svgs: string[] = [];
  for (const [index] of outcome.options.outagesMs.entries()) {
    const series = ids.map((id) => outcome.timelines.get(id)?.[index]).filter((timeline): timeline is Timeline => timeline !== undefined);
    if (series.length > 0) svgs.push(await renderSvg(timelineSpec(series)));
  }
  return svgs;
}

/** The user's policy beside the smallest change and choose's first, on one page. */
async function reportHtml(outcome: CheckOutcome, scenario: ScenarioSource | undefined): Promise<string> {
  const { options, input } = outcome;
  const sources = sourcesOf(outcome.policies);
  const first = outcome.first;
  const sections: string[] = [];
  for (const policy of outcome.policies) {
    const rows: [string, CandidateSummary | undefined][] = [
      ["your policy", policy.summary],
      ["the smallest change that qualifies", policy.smallest?.summary],
      [`choose's first (${first.candidate.id})`, first],
    ];
    const head = ["", ...EVERYDAY_HEADER, "outages survived", "the longest survived"];
    const body = rows
      .filter((row): row is [string, CandidateSummary] => row[1] !== undefined)
      .map(([label, summary]) => [
        label,
        ...everydayCells(summary),
        `${summary.listedSurvived} of ${summary.outages.length}`,
        formatDuration(summary.longestSurvivedMs),
      ]);
    sections.push(`<h2>${escapeHtml(policy.reading.name)}</h2>
<p>${escapeHtml(gradeLines(policy.grade, policy.summary, options.sloMs, options.own["max-outage"]).join("; "))}.</p>
<table><tr>${head.map((cell) => `<th>${escapeHtml(cell)}</th>`).join("")}</tr>
${body.map((cells) => `<tr>${cells.map((cell) => `<td>${escapeHtml(cell)}</td>`).join("")}</tr>`).join("\n")}</table>
<h3>How your file was read</h3><pre>${escapeHtml(fieldTable(policy.reading, sources))}</pre>
${policy.reading.unmodeled.length > 0 ? `<ul>${policy.reading.unmodeled.map((field) => `<li>not modelled: <code>${escapeHtml(field.field)}</code> = ${escapeHtml(field.value)}: ${escapeHtml(field.why)}</li>`).join("")}</ul>` : ""}
<h3>The change</h3><pre>${escapeHtml(changeText(outcome, policy).join("\n"))}</pre>
<h3>Timelines</h3>${(await timelineSvgs(outcome, policy)).join("\n")}`);
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>thundering-herd check: ${escapeHtml(input.file)}</title>
<style>${PAGE_STYLE}</style></head>
<body><h1>thundering-herd check: ${escapeHtml(input.file)}</h1>
<p>${escapeHtml(input.format.title)}; system: ${escapeHtml(flags(systemSettings(options.system)) || "the simulator's defaults (the article's system)")}; seeds ${options.seeds.join(", ")}.</p>
${sections.join("\n")}
<h2>choose's ranking, with your policies in it</h2>
<p>${escapeHtml(rankingRule(options.outagesMs, options.sloMs))}</p>
<pre>${escapeHtml(rankedTable(outcome.ranked, options.own["max-outage"]))}</pre>
<h2>Sources</h2><ol>${sources.map((source) => `<li>${escapeHtml(source)}</li>`).join("")}</ol>
${scenarioSection(scenario)}</body></html>
`;
}

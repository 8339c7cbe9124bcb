import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { chainTable } from "../recommend/chain-plan.ts";
import { chainRankingRule, type ChainSummary } from "../recommend/chain-ranking.ts";
import { scheduleText } from "../options/measure.ts";
import { percent } from "../recommend/ranking.ts";
import { jsonNumbers } from "../recommend/report.ts";
import { escapeHtml, PAGE_STYLE, type ScenarioSource, scenarioSection } from "../report/html.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { type ChainCheckOutcome, type ChainGrade, chainGradeOf, type ChainPolicyOutcome } from "./chain.ts";
import { fieldTable, fileDiff, flags, readingLines, sourcesOf } from "./render.ts";

/** A chain's grade in a few clauses. */
export function chainGradeLines(grade: ChainGrade, summary: ChainSummary, sloMs: number): string[] {
  const verdict = grade.qualifies
    ? `qualifies: every tier was back at the end of every run (${summary.runs})`
    : `does not qualify: ${grade.firstCollapsed ?? "a tier"} was the first tier to stay down (${summary.verdicts.filter((verdict) => verdict === "collapsed").length} of ${summary.runs} runs)`;
  return [
    verdict,
    `the users' success within the SLO of ${formatDuration(sloMs)}: ${percent(grade.sloSuccess)}`,
    `attempts per user request at the bottom tier during the faults: ${grade.bottomAmplification.toFixed(2)}`,
    grade.backAtMs === null ? "a tier stayed down" : `every tier back ${formatDuration(grade.backAtMs)} after the run's start`,
  ];
}

function chainChangeText(outcome: ChainCheckOutcome, policy: ChainPolicyOutcome): string[] {
  if (policy.grade.qualifies) return ["No change needed."];
  const smallest = policy.smallest;
  const tried = `${policy.tried.length} changes simulated at every layer (one field at a time, and choose's qualifying policies as your format says them)`;
  if (smallest === undefined) return [`No change tried qualifies: ${tried}. choose's chain ranking below shows what does.`];
  return [
    `The smallest change to your file that makes the chain qualify (${smallest.variant.changedLines} lines; ${tried}): ${smallest.variant.change}.`,
    fileDiff(outcome.input, smallest.variant.text).trimEnd(),
    ...smallest.variant.notes.map((note) => `note: ${note}`),
    `Read back, the file then says: ${flags(smallest.variant.settings)}`,
    `With it: ${chainGradeLines(chainGradeOf(smallest.summary), smallest.summary, outcome.sloMs).join("; ")}.`,
  ];
}

export function renderChainText(outcome: ChainCheckOutcome, io: ProgramIo): void {
  const sources = sourcesOf(outcome.policies);
  for (const policy of outcome.policies) {
    for (const line of readingLines(outcome.input, policy.reading, sources)) io.stdout.write(`${line}\n`);
    io.stdout.write(
      `\nAt every layer of the chain ${outcome.tiers.join(" → ")} (faults ${outcome.schedules.map(scheduleText).join("; ")}), it ` +
        `${chainGradeLines(policy.grade, policy.summary, outcome.sloMs).join("; ")}.\n`,
    );
    io.stdout.write(
      `Ranked ${policy.grade.rank} of ${policy.grade.of} among choose's chain candidates; choose's first: ${outcome.first.candidate.id}.\n\n`,
    );
    for (const line of chainChangeText(outcome, policy)) io.stdout.write(`${line}\n`);
    for (const entry of policy.unwritable) io.stdout.write(`not tried: ${entry.change}: ${entry.why}\n`);
    io.stdout.write("\n");
  }
  io.stdout.write(`${chainTable(outcome.ranked)}\n\n${chainRankingRule(outcome.sloMs)}\n\n`);
  io.stdout.write(`Sources:\n${sources.map((source, index) => `  [${index + 1}] ${source}\n`).join("")}`);
}

function chainJson(outcome: ChainCheckOutcome, scenario: ScenarioSource | undefined) {
  return {
    config: { file: outcome.input.file, format: outcome.input.format.name, title: outcome.input.format.title },
    settings: { chain: outcome.tiers, faults: outcome.schedules.map(scheduleText), sloMs: outcome.sloMs, ...scenarioSettings(scenario) },
    rankingRule: chainRankingRule(outcome.sloMs),
    policies: outcome.policies.map((policy) => ({
      name: policy.reading.name,
      settings: policy.reading.settings,
      fields: policy.reading.fields,
      unmodeled: policy.reading.unmodeled,
      grade: policy.grade,
      tiers: policy.summary.tiers,
      smallestChange:
        policy.smallest === undefined
          ? null
          : {
              change: policy.smallest.variant.change,
              changedLines: policy.smallest.variant.changedLines,
              diff: fileDiff(outcome.input, policy.smallest.variant.text),
              settings: policy.smallest.variant.settings,
              notes: policy.smallest.variant.notes,
              grade: chainGradeOf(policy.smallest.summary),
            },
      tried: policy.tried.map((entry) => ({
        change: entry.variant.change,
        settings: entry.variant.settings,
        changedLines: entry.variant.changedLines,
        qualifies: chainGradeOf(entry.summary).qualifies,
        grade: chainGradeOf(entry.summary),
      })),
      notTried: policy.unwritable,
    })),
    chooseFirst: outcome.first.candidate.id,
    ranking: outcome.ranked.map((summary, index) => ({
      rank: index + 1,
      id: summary.candidate.id,
      verdict: summary.verdict,
      sloSuccess: summary.sloSuccess,
    })),
    sources: sourcesOf(outcome.policies),
    skipped: outcome.skipped,
  };
}

/** summary.json and report.html for a chain, and -json's answer. */
export function renderChainFiles(
  outcome: ChainCheckOutcome,
  scenario: ScenarioSource | undefined,
  out: string,
  json: boolean,
  io: ProgramIo,
): void {
  const outDir = resolve(out, `check-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(outDir, { recursive: true });
  const result = chainJson(outcome, scenario);
  writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(result, jsonNumbers, 2)}\n`);
  const sources = sourcesOf(outcome.policies);
  const sections = outcome.policies.map(
    (policy) => `<h2>${escapeHtml(policy.reading.name)}</h2>
<p>${escapeHtml(chainGradeLines(policy.grade, policy.summary, outcome.sloMs).join("; "))}.</p>
<h3>How your file was read</h3><pre>${escapeHtml(fieldTable(policy.reading, sources))}</pre>
<h3>The change</h3><pre>${escapeHtml(chainChangeText(outcome, policy).join("\n"))}</pre>`,
  );
  writeFileSync(
    join(outDir, "report.html"),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>thundering-herd check: ${escapeHtml(outcome.input.file)}</title>
<style>${PAGE_STYLE}</style></head>
<body><h1>thundering-herd check: ${escapeHtml(outcome.input.file)}</h1>
<p>${escapeHtml(outcome.input.format.title)}; your policy at every layer of the chain ${escapeHtml(outcome.tiers.join(" → "))}.</p>
${sections.join("\n")}
<h2>choose's chain ranking, with your policies in it</h2><p>${escapeHtml(chainRankingRule(outcome.sloMs))}</p>
<pre>${escapeHtml(chainTable(outcome.ranked))}</pre>
<h2>Sources</h2><ol>${sources.map((source) => `<li>${escapeHtml(source)}</li>`).join("")}</ol>
${scenarioSection(scenario)}</body></html>
`,
  );
  if (json) io.stdout.write(`${JSON.stringify({ ...result, report: join(outDir, "report.html") }, jsonNumbers, 2)}\n`);
  else io.stdout.write(`report: ${join(outDir, "report.html")}\n`);
}

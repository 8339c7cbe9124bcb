import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import type { ChainConfig } from "../config/chain-config.ts";
import {
  type ChainCandidate,
  chainConfigFor,
  chainGrid,
  chainSelectedBy,
  DEFAULT_CHAIN_POLICIES,
  PLACEMENTS,
} from "../recommend/chain-candidates.ts";
import { chainPlan, chainTable, measureGrid } from "../recommend/chain-plan.ts";
import {
  chainComparison,
  chainHeadline,
  chainQualification,
  chainRankingRule,
  chainTieBreak,
  type ChainSummary,
  rankChain,
} from "../recommend/chain-ranking.ts";
import { scheduleText } from "../options/measure.ts";
import type { Ranking } from "../recommend/ranking.ts";
import { jsonNumbers } from "../recommend/report.ts";
import { intentOf, type Snippet, snippetsFor, snippetText } from "../recommend/snippets.ts";
import type { ChooseOptions } from "../options/choose.ts";

/*
 * choose with a scenario file that has tiers: which layers of the chain should retry, and how.
 * Each chain candidate (src/recommend/chain-candidates.ts) runs in the simulator's chain with the
 * file's fault schedules (or -faults) on choose's seeds, on choose's worker threads; one ranking
 * (chain-ranking.ts), one recommendation, per-layer snippets.
 */

/** choose's own flags that mean nothing for a chain: the single server's outage analysis and the real programs. */
const NOT_FOR_A_CHAIN = ["validate", "server-side", "client-only", "print-scenario", "target"] as const;

export async function chooseChain(options: ChooseOptions, scenario: LoadedScenario, io: ProgramIo): Promise<number> {
  const own = options.own;
  const refused = NOT_FOR_A_CHAIN.find((name) => own[name]);
  if (refused !== undefined) throw new UsageError(`-${refused} does not apply to a chain of tiers (tiers:) yet`);
  const { schedules, base, sloMs } = await chainPlan(options, scenario, io, "choose needs the chain's faults to choose against");
  const skipped: string[] = [];
  const all = chainGrid(base, schedules, skipped);
  for (const pattern of options.candidateFilter ?? []) {
    const matches = all.some((entry) => (pattern.endsWith("*") ? entry.id.startsWith(pattern.slice(0, -1)) : entry.id === pattern));
    if (!matches) throw new UsageError(`invalid value "${pattern}" for flag -candidates: no such chain candidate (-list shows them)`);
  }
  const grid = all.filter((candidate) => chainSelectedBy(options.candidateFilter, candidate));
  if (grid.length === 0) throw new UsageError(`no chain candidate can run: ${skipped[0] ?? "none selected"}`);
  if (own.list) {
    io.stdout.write(chainListing(all, grid, skipped, options, schedules));
    return 0;
  }
  io.stderr.write(
    `choose: chain ${base.tiers.map((tier) => tier.name).join(" → ")}: ${grid.length} candidates x ${options.seeds.length} seeds x ` +
      `${schedules.length} fault schedules on ${options.parallel} worker threads; run ${formatDuration(base.values.duration)}; ` +
      `faults ${schedules.map(scheduleText).join("; ")}\n`,
  );
  const configs = grid.map((candidate) => schedules.map((schedule) => chainConfigFor(base, candidate, schedule)));
  const summaries = await measureGrid(grid, configs, options, sloMs, io);
  const result = rankChain(summaries);
  const ranked = result.ranked;
  const winner = ranked[0]!;
  const bottom = base.tiers.at(-1)!.name;
  const tie = chainTieBreak(result);
  const qualification = chainQualification(ranked);
  const comparison = chainComparison(ranked);
  const recommendation = [
    chainHeadline(ranked, bottom, sloMs),
    ...[tie, qualification, comparison].filter((paragraph): paragraph is string => paragraph !== undefined),
  ];
  const rule = chainRankingRule(sloMs);
  const snippets = layerSnippets(winner.candidate, configs[grid.indexOf(winner.candidate)]![0]!);

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = resolve(own.out, `choose-${stamp}`);
  const output = {
    settings: {
      chain: base.tiers.map((tier) => tier.name),
      seeds: options.seeds,
      faults: schedules.map(scheduleText),
      durationMs: base.values.duration,
      sloMs,
      ...scenarioSettings(scenario),
    },
    rankingRule: rule,
    ranking: rankingEntries(result),
    recommendation: {
      id: winner.candidate.id,
      headline: recommendation[0],
      tieBreak: tie ?? null,
      qualification: qualification ?? null,
      comparison: comparison ?? null,
      retrying: winner.candidate.layers.filter((layer) => layer.retries).map((layer) => layer.name),
      once: winner.candidate.layers.filter((layer) => !layer.retries).map((layer) => layer.name),
    },
    snippets: snippets.map(({ layer, snippet }) => ({ layer, ...snippet })),
    skipped,
  };
  mkdirSync(outDir, { recursive: true });
  for (const { layer, snippet } of snippets) writeFileSync(join(outDir, `${layer}-${snippet.file}`), snippet.text);
  writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(output, jsonNumbers, 2)}\n`);
  if (own.json) {
    io.stdout.write(`${JSON.stringify({ ...output, out: outDir }, jsonNumbers, 2)}\n`);
    return 0;
  }
  writeChainText(io, recommendation, ranked, rule, snippets, outDir);
  io.stdout.write(`\nsummary: ${join(outDir, "summary.json")}\n`);
  return 0;
}

/** The answer as text: the recommendation, the table, the rule and its legend, the other paragraphs, the gRPC snippets. */
function writeChainText(
  io: ProgramIo,
  recommendation: readonly string[],
  ranked: readonly ChainSummary[],
  rule: string,
  snippets: readonly { layer: string; snippet: Snippet }[],
  outDir: string,
): void {
  io.stdout.write(`${recommendation[0]}\n\n${chainTable(ranked)}\n\n`);
  io.stdout.write(`Ranking rule: ${rule}\n`);
  io.stdout.write(CHAIN_TABLE_LEGEND);
  for (const paragraph of recommendation.slice(1)) io.stdout.write(`${paragraph}\n\n`);
  const retrying = ranked[0]!.candidate.layers.filter((layer) => layer.retries).map((layer) => layer.name);
  io.stdout.write(`The settings of each layer that retries (${retrying.join(", ")}), for gRPC; every system's in ${outDir}:\n\n`);
  for (const { layer, snippet } of snippets.filter((entry) => entry.snippet.id === "grpc")) {
    io.stdout.write(snippetText({ ...snippet, title: `${layer}: ${snippet.title}` }));
  }
}

/** The ranking as summary.json and -json give it: a row per candidate, with what put it after the one before. */
function rankingEntries(result: Ranking<ChainSummary>) {
  return result.ranked.map((summary, index) => ({
    rank: index + 1,
    id: summary.candidate.id,
    placement: summary.candidate.placement,
    policy: summary.candidate.policy,
    summary: summary.candidate.summary,
    layers: summary.candidate.layers,
    verdict: summary.verdict,
    verdicts: summary.verdicts,
    goodputPerSec: summary.goodputPerSec,
    goodputSpread: summary.goodputSpread,
    successRate: summary.successRate,
    sloSuccess: summary.sloSuccess,
    sloSuccessSpread: summary.sloSuccessSpread,
    backAtMs: summary.backAtMs,
    peakLoad: summary.peakLoad,
    peakTier: summary.peakTier,
    tiers: summary.tiers,
    decidedBy: result.decidedBy[index] ?? null,
  }));
}

/** For each layer of the winner that retries, the existing snippets of its policy. */
function layerSnippets(candidate: ChainCandidate, config: ChainConfig): { layer: string; snippet: Snippet }[] {
  return candidate.layers.flatMap((layer, index) => {
    if (!layer.retries) return [];
    const policy = index === 0 ? { retry: config.retry, timeoutMs: config.timeoutMs } : config.tiers[index - 1]!.upstream!;
    const intent = {
      ...intentOf(`${candidate.id} (${layer.name})`, policy.retry, policy.timeoutMs, layer.settings),
      // A tier is one client instance: its budget is shared by all its calls (docs/tiers.md).
      ...(index === 0 ? {} : { budgetHolder: `${layer.name} one budget for all its calls, as one channel` }),
    };
    return snippetsFor(intent).map((snippet) => ({ layer: layer.name, snippet }));
  });
}

const flags = (settings: Readonly<Record<string, string>>) =>
  Object.entries(settings)
    .map(([name, value]) => `-${name} ${value}`)
    .join(" ");

/** What the chain table's columns mean, printed under it. */
const CHAIN_TABLE_LEGEND =
  "Columns: the chain's verdict (worst tier, worst run); the users' requests that succeeded within the SLO (in brackets, the " +
  "spread across seeds, the largest over the fault schedules); the users' OK answers per second over the run (in brackets, the spread); the share of their requests " +
  "that succeeded at all; when the last tier that collapsed was back; the largest peak load (peak ÷ normal arrivals/s) and its " +
  "tier; per tier, attempts per user request while the faults lasted (the largest over the runs).\n\n";

function chainListing(
  all: readonly ChainCandidate[],
  selected: readonly ChainCandidate[],
  skipped: readonly string[],
  options: ChooseOptions,
  schedules: readonly (readonly Fault[])[],
): string {
  const lines = all.map((candidate) => {
    const mark = selected.includes(candidate) ? "*" : " ";
    const layers = candidate.layers.map((layer) => `${layer.name}: ${flags(layer.settings)}`).join("; ");
    return `${mark} ${candidate.id.padEnd(48)} ${layers}`;
  });
  const runs = selected.length * options.seeds.length * schedules.length;
  return (
    `${all.length} chain candidates, placements ${PLACEMENTS.map((placement) => placement.id).join(", ")} ` +
    `(* runs by default: policies ${DEFAULT_CHAIN_POLICIES.join(", ")}; -candidates picks others):\n${lines.join("\n")}\n` +
    (skipped.length > 0 ? `\nleft out (the simulator rejects them):\n${skipped.map((entry) => `  ${entry}`).join("\n")}\n` : "") +
    `\nsimulations: ${runs} (${selected.length} candidates x ${options.seeds.length} seeds x ${schedules.length} fault schedules)\n` +
    `faults: ${schedules.map(scheduleText).join("; ")}\n`
  );
}

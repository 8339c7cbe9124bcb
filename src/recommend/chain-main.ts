import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { WorkerPool } from "../runtime/worker-pool.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import { USER_FLAG_NAMES } from "../scenario-file/tiers.ts";
import { scenarioSettings } from "../report/summary-file.ts";
import { textTable } from "../report/text-table.ts";
import type { ChainConfig } from "../runner/chain.ts";
import { checkFaultTiers, parseSimArgs, SIM_TARGET, type SimFlagValues } from "../sim/options.ts";
import {
  type ChainBase,
  type ChainCandidate,
  chainConfigFor,
  chainGrid,
  chainSelectedBy,
  DEFAULT_CHAIN_POLICIES,
  PLACEMENTS,
} from "./chain-candidates.ts";
import type { ChainJob, ChainRunResult } from "./chain-measure.ts";
import {
  chainComparison,
  chainHeadline,
  chainQualification,
  chainRankingRule,
  chainTieBreak,
  type ChainSummary,
  rankChain,
  summarizeChain,
} from "./chain-ranking.ts";
import { type ChooseOptions, scheduleEndMs, scheduleText, SLO_TIMEOUTS } from "../choose/options.ts";
import { runWithProgress } from "./progress.ts";
import type { Ranking } from "./ranking.ts";
import { jsonNumbers } from "./report.ts";
import { SIM_FLAG_SPECS } from "./settings.ts";
import { intentOf, type Snippet, snippetsFor, snippetText } from "./snippets.ts";

/*
 * choose with a scenario file that has tiers: which layers of the chain should retry, and how.
 * Each chain candidate (chain-candidates.ts) runs in the simulator's chain with the file's
 * fault schedules (or -faults) on choose's seeds, on choose's worker threads; one ranking
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

/**
 * The chain as the file gives it, its fault schedules and the users' SLO, each checked by the
 * chain's rules before anything runs; `needsFaults` says why a chain without faults is refused.
 */
export async function chainPlan(options: ChooseOptions, scenario: LoadedScenario, io: ProgramIo, needsFaults: string) {
  const schedules = options.schedules;
  if (schedules === undefined) throw new UsageError(`${scenario.file}: ${needsFaults}: faults: in the file, or -faults`);
  const base = await chainBase(options, scenario, io);
  checkFaultTiers(
    schedules.flat(),
    base.tiers.map((tier) => tier.name),
  );
  const sloMs = chainSloMs(options, base.values);
  checkRunHoldsFaults(schedules, base.values.duration, sloMs);
  return { schedules, base, sloMs };
}

/** Each candidate's runs (seeds within fault schedules) on choose's worker threads, summarized. */
export async function measureGrid(
  grid: readonly ChainCandidate[],
  configs: readonly (readonly ChainConfig[])[],
  options: ChooseOptions,
  sloMs: number,
  io: ProgramIo,
  label = "choose: simulating the chain",
): Promise<ChainSummary[]> {
  const jobs: ChainJob[] = grid.flatMap((_, candidateIndex) =>
    configs[candidateIndex]!.flatMap((config, scheduleIndex) =>
      options.seeds.map((seed) => ({ candidateIndex, scheduleIndex, seed, sloMs, config })),
    ),
  );
  const pool = new WorkerPool("choose", options.parallel);
  let results: ChainRunResult[];
  try {
    results = await runWithProgress<ChainRunResult>(pool, "chain", jobs, io.stderr, label);
  } finally {
    await pool.close();
  }
  return grid.map((candidate, index) =>
    summarizeChain(
      candidate,
      results.filter((result) => result.candidateIndex === index),
    ),
  );
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

/**
 * The run must go on after every schedule's faults, to see the chain come back, and the requests
 * that success within the SLO counts (those sent before the run's end less the SLO) must hold them.
 */
function checkRunHoldsFaults(schedules: readonly (readonly Fault[])[], durationMs: number, sloMs: number): void {
  const tooLate = schedules.find((schedule) => scheduleEndMs(schedule) >= durationMs);
  if (tooLate !== undefined) {
    throw new UsageError(
      `the run (run: duration, ${formatDuration(durationMs)}) must go on after the faults ${scheduleText(tooLate)} end, to see the chain come back`,
    );
  }
  const unseen = schedules.find((schedule) => scheduleEndMs(schedule) > durationMs - sloMs);
  if (unseen !== undefined) {
    throw new UsageError(
      `invalid value "${formatDuration(sloMs)}" for flag -slo: success within it counts the requests sent in the run's first ` +
        `${formatDuration(durationMs - sloMs)}, which must hold the faults ${scheduleText(unseen)}: a shorter -slo, or a longer run`,
    );
  }
}

/**
 * The users' deadline for a chain: -slo, or SLO_TIMEOUTS x the users' timeout as for a single
 * server, at most half the run, so that most of the run's requests have the whole SLO in it.
 */
function chainSloMs(options: ChooseOptions, values: SimFlagValues): number {
  const sloMs = options.own.slo ?? Math.min(SLO_TIMEOUTS * values.timeout, values.duration / 2);
  if (sloMs >= values.duration) {
    throw new UsageError(
      `invalid value "${formatDuration(sloMs)}" for flag -slo: must be shorter than the run (run: duration, ${formatDuration(values.duration)}), which measures it`,
    );
  }
  return sloMs;
}

/**
 * The chain as ./sim reads the file (the users' policy in strategy:, the run's duration, which
 * choose has no flags for), with the users' flags that choose's command line gave laid over it;
 * the faults are choose's own (-faults, or the file's).
 */
async function chainBase(options: ChooseOptions, scenario: LoadedScenario, io: ProgramIo): Promise<ChainBase> {
  const { parseScenario } = await import("../scenario-file/read.ts");
  const asSim = await parseScenario(scenario.text, scenario.file, SIM_TARGET);
  const neither = scenario.ignored.filter((key) => asSim.ignored.includes(key));
  if (neither.length > 0) io.stderr.write(`choose: ${scenario.file}: ignoring ${neither.join(", ")}: not for a chain\n`);
  const parsed = parseSimArgs(asSim.tokens.filter((token) => !token.startsWith("-faults=")));
  if (parsed.kind !== "run") throw new Error("unreachable: a scenario file asks for no help");
  const values: Record<string, unknown> = { ...parsed.values };
  for (const name of USER_FLAG_NAMES)
    if (SIM_FLAG_SPECS.has(name) && options.system[name] !== undefined) values[name] = options.system[name];
  return { values: values as unknown as SimFlagValues, tiers: scenario.tiers! };
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

const spreadText = (value: string, spread: string, runs: number) => (runs > 1 ? `${value} (${spread})` : value);

/** The ranked table: one row per candidate, a column per tier for its amplification during the faults. */
export function chainTable(ranked: readonly ChainSummary[]): string {
  const tiers = ranked[0]?.tiers.map((tier) => tier.name) ?? [];
  const header = [
    "rank",
    "candidate",
    "verdict",
    "within SLO",
    "goodput/s",
    "succeeded",
    "back",
    "peak load",
    ...tiers.map((name) => `${name} in faults`),
  ];
  const rows = ranked.map((summary, index) => [
    String(index + 1),
    summary.candidate.id,
    summary.verdict,
    spreadText(`${(summary.sloSuccess * 100).toFixed(2)} %`, (summary.sloSuccessSpread * 100).toFixed(2), summary.runs),
    spreadText(summary.goodputPerSec.toFixed(1), summary.goodputSpread.toFixed(1), summary.runs),
    `${(summary.successRate * 100).toFixed(2)} %`,
    summary.backAtMs === null ? "never" : summary.backAtMs === 0 ? "-" : formatDuration(summary.backAtMs),
    `${summary.peakLoad.toFixed(2)}x ${summary.peakTier}`,
    ...summary.tiers.map((tier) => (tier.faultAmplification === null ? "-" : `${tier.faultAmplification.toFixed(2)}x`)),
  ]);
  return textTable([header, ...rows]);
}

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

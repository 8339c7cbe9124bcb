import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { WorkerPool } from "../runtime/worker-pool.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import type { ScenarioTarget } from "../options/scenario-target.ts";
import { USER_FLAG_NAMES } from "../scenario-file/tiers.ts";
import { textTable } from "../report/text-table.ts";
import type { ChainConfig } from "../config/chain-config.ts";
import { checkFaultTiers, parseSimulationArgs, SIMULATION_FLAGS, type SimulationFlagValues } from "../config/simulation.ts";
import type { ChainBase, ChainCandidate } from "./chain-candidates.ts";
import type { ChainJob, ChainRunResult } from "./chain-measure.ts";
import { type ChainSummary, summarizeChain } from "./chain-ranking.ts";
import { type MeasureOptions, scheduleEndMs, scheduleText, SLO_TIMEOUTS } from "../options/measure.ts";
import { runWithProgress } from "./progress.ts";
import { SIM_FLAG_SPECS } from "./settings.ts";

/*
 * A chain of tiers (a scenario file's tiers:) as choose and check measure it: the chain as the
 * file gives it with its fault schedules and the users' SLO, checked before anything runs; each
 * candidate's runs on the worker threads, summarized; the ranked table. choose's stage over it
 * is src/choose/chain.ts, check's src/check/chain.ts.
 */

/**
 * The chain as the file gives it, its fault schedules and the users' SLO, each checked by the
 * chain's rules before anything runs; `needsFaults` says why a chain without faults is refused.
 */
export async function chainPlan(options: MeasureOptions, scenario: LoadedScenario, io: ProgramIo, needsFaults: string) {
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
  options: MeasureOptions,
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
function chainSloMs(options: MeasureOptions, values: SimulationFlagValues): number {
  const sloMs = options.own.slo ?? Math.min(SLO_TIMEOUTS * values.timeout, values.duration / 2);
  if (sloMs >= values.duration) {
    throw new UsageError(
      `invalid value "${formatDuration(sloMs)}" for flag -slo: must be shorter than the run (run: duration, ${formatDuration(values.duration)}), which measures it`,
    );
  }
  return sloMs;
}

/**
 * A scenario file's keys as a simulated run reads them: ./sim's, less what ./sim runs and prints. Named
 * apart from ./sim, so that ./sim's other keys stay known to the reader, as every program's do.
 */
const AS_SIMULATED: ScenarioTarget = { program: "a simulated run", flags: SIMULATION_FLAGS };

/**
 * The chain as ./sim reads the file (the users' policy in strategy:, the run's duration, which
 * choose has no flags for), with the users' flags that choose's command line gave laid over it;
 * the faults are choose's own (-faults, or the file's).
 */
async function chainBase(options: MeasureOptions, scenario: LoadedScenario, io: ProgramIo): Promise<ChainBase> {
  const { parseScenario } = await import("../scenario-file/read.ts");
  const asSim = await parseScenario(scenario.text, scenario.file, AS_SIMULATED);
  const neither = scenario.ignored.filter((key) => asSim.ignored.includes(key));
  if (neither.length > 0) io.stderr.write(`choose: ${scenario.file}: ignoring ${neither.join(", ")}: not for a chain\n`);
  const parsed = parseSimulationArgs(asSim.tokens.filter((token) => !token.startsWith("-faults=")));
  if (parsed.kind !== "run") throw new Error("unreachable: a scenario file asks for no help");
  const values: Record<string, unknown> = { ...parsed.values };
  for (const name of USER_FLAG_NAMES)
    if (SIM_FLAG_SPECS.has(name) && options.system[name] !== undefined) values[name] = options.system[name];
  return { values: values as unknown as SimulationFlagValues, tiers: scenario.tiers! };
}

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

import { UsageError } from "../cli/usage-error.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { WorkerPool } from "../runtime/worker-pool.ts";
import { configFrom } from "../sim/options.ts";
import type { SimulationConfig } from "../runner/simulate.ts";
import { type Candidate, clientGrid, selectedBy } from "./candidates.ts";
import { type MeasureJob, type MeasurePlan, type SeedResult, troubleStartMs } from "./measure.ts";
import type { ChooseOptions } from "../choose/options.ts";
import { runWithProgress } from "./progress.ts";
import type { Timeline } from "./report.ts";
import { simValuesFor } from "./settings.ts";
import { type CandidateSummary, summarize } from "./summary.ts";

/*
 * The measure stage that choose and check share: candidates made into the simulator's
 * configurations on the user's system (by ./sim's own rules), and measured with each seed on
 * the worker threads.
 */

/** The bisection's shortest outage and resolution. */
export const MIN_OUTAGE_MS = 250;
const BISECTION_RATIO = 1.05;
const BISECTION_MS = 250;

/** A candidate and its simulator configuration on the user's system. */
export interface Measured {
  readonly candidate: Candidate;
  readonly config: SimulationConfig;
}

/** The outages, SLO and bisection every candidate is measured by. */
export function measurePlan(options: ChooseOptions): MeasurePlan {
  const own = options.own;
  return {
    steadyMs: own.steady,
    observeMs: own.observe,
    everydayMs: own.everyday,
    sloMs: options.sloMs,
    outagesMs: options.outagesMs,
    schedules: options.schedules,
    minOutageMs: Math.min(MIN_OUTAGE_MS, options.outagesMs[0]!),
    maxOutageMs: own["max-outage"],
    bisectionRatio: BISECTION_RATIO,
    bisectionMs: BISECTION_MS,
  };
}

/** A candidate's flags over the user's system, as the simulator's configuration; a UsageError naming what the simulator refuses. */
export function toConfig(
  system: Readonly<Record<string, unknown>>,
  client: Candidate["client"],
  server: Candidate["server"],
): SimulationConfig {
  try {
    return configFrom(simValuesFor(system, client, server));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** The client grid, filtered by -candidates, each checked by the simulator's rules (rejected ones are listed, not run). */
export function buildGrid(options: ChooseOptions, skipped: string[]): Measured[] {
  const all = clientGrid();
  const filter = options.candidateFilter;
  for (const pattern of filter ?? []) {
    const matches = all.some((entry) => (pattern.endsWith("*") ? entry.id.startsWith(pattern.slice(0, -1)) : entry.id === pattern));
    if (!matches) throw new UsageError(`invalid value "${pattern}" for flag -candidates: no such candidate (-list shows them)`);
  }
  return all
    .filter((entry) => selectedBy(filter, entry))
    .flatMap((candidate) => {
      try {
        return [{ candidate, config: toConfig(options.system, candidate.client, candidate.server) }];
      } catch (error) {
        skipped.push(`${candidate.id}: ${(error as Error).message}`);
        return [];
      }
    });
}

/**
 * Measures each entry with each seed; returns the summaries over the seeds, and adds each
 * seed's summary alone to `perSeed` (for the stability count) and, when given, the first
 * seed's timelines to `timelines`.
 */
export async function measureAll(
  entries: readonly Measured[],
  seeds: readonly number[],
  plan: MeasurePlan,
  pool: WorkerPool,
  io: ProgramIo,
  label: string,
  perSeed: Map<string, CandidateSummary[]>,
  timelines?: Map<string, Timeline[]>,
): Promise<CandidateSummary[]> {
  const jobs: MeasureJob[] = entries.flatMap((entry, candidateIndex) =>
    seeds.map((seed, seedIndex) => ({
      candidateIndex,
      seed,
      config: entry.config,
      plan,
      keepTimelines: timelines !== undefined && seedIndex === 0,
    })),
  );
  const results = await runWithProgress<SeedResult>(pool, "measure", jobs, io.stderr, label);
  return entries.map((entry, candidateIndex) => {
    const own = results.filter((result) => result.candidateIndex === candidateIndex);
    const first = own[0]!;
    const single = perSeed.get(entry.candidate.id) ?? [];
    perSeed.set(entry.candidate.id, [...single, ...own.map((result) => summarize(entry.candidate, [result]))]);
    timelines?.set(
      entry.candidate.id,
      first.outages.map((outage, index) => ({
        id: entry.candidate.id,
        outageMs: outage.outageMs,
        faults: plan.schedules?.[index],
        stopAtMs: troubleStartMs(plan.schedules?.[index], plan.steadyMs),
        server: outage.timeline?.server ?? [],
        client: outage.timeline?.client ?? [],
      })),
    );
    return summarize(entry.candidate, own);
  });
}

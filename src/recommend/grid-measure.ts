import { UsageError } from "../cli/usage-error.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { WorkerPool } from "../runtime/worker-pool.ts";
import { simulationConfigFrom } from "../config/simulation.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import { type Candidate, clientGrid, selectedBy } from "./candidates.ts";
import { type MeasureJob, type MeasurePlan, type OutageResult, type SeedResult, type TimelinesJob, troubleStartMs } from "./measure.ts";
import type { MeasureOptions } from "../options/measure.ts";
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
export function measurePlan(options: MeasureOptions): MeasurePlan {
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
    return simulationConfigFrom(simValuesFor(system, client, server));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** The client grid, filtered by -candidates, each checked by the simulator's rules (rejected ones are listed, not run). */
export function buildGrid(options: MeasureOptions, skipped: string[]): Measured[] {
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

/** What the measure stage keeps besides the summaries: each seed's summary alone, and the first seed's timelines. */
interface Keep {
  /** Each entry's summary with each seed alone (for the stability count), in the seeds' order. */
  readonly perSeed: Map<string, CandidateSummary[]>;
  /** The first seed's outage timelines, for the report. */
  readonly timelines?: Map<string, Timeline[]> | undefined;
}

/** Runs `jobs` (entry, seed) on the pool, the bar counting them; adds each result to its entry's list, in the seeds' order. */
async function runJobs(
  entries: readonly Measured[],
  jobs: readonly { readonly entryIndex: number; readonly seed: number; readonly keepTimelines: boolean }[],
  plan: MeasurePlan,
  pool: WorkerPool,
  io: ProgramIo,
  label: string,
  results: SeedResult[][],
): Promise<void> {
  const measureJobs: MeasureJob[] = jobs.map((job) => ({
    candidateIndex: job.entryIndex,
    seed: job.seed,
    config: entries[job.entryIndex]!.config,
    plan,
    keepTimelines: job.keepTimelines,
  }));
  const done = await runWithProgress<SeedResult>(pool, "measure", measureJobs, io.stderr, label);
  for (const result of done) results[result.candidateIndex]!.push(result);
}

/** The summaries of measured entries, each seed's alone added to `keep.perSeed`, and the first seed's timelines to `keep.timelines`. */
function summariesOf(entries: readonly Measured[], results: readonly SeedResult[][], plan: MeasurePlan, keep: Keep): CandidateSummary[] {
  return entries.map((entry, index) => {
    const own = results[index]!;
    const first = own[0]!;
    addPerSeed(keep.perSeed, entry, own);
    keep.timelines?.set(
      entry.candidate.id,
      timelinesOf(
        entry.candidate.id,
        first.outages.map((outage) => outage.timeline),
        plan,
      ),
    );
    return summarize(entry.candidate, own);
  });
}

/** Each seed's summary alone of an entry, after those `perSeed` already holds for it (the stability count ranks them). */
function addPerSeed(perSeed: Map<string, CandidateSummary[]>, entry: Measured, own: readonly SeedResult[]): void {
  const single = perSeed.get(entry.candidate.id) ?? [];
  perSeed.set(entry.candidate.id, [...single, ...own.map((result) => summarize(entry.candidate, [result]))]);
}

/** A candidate's listed outages' timelines, as the report draws them. */
function timelinesOf(id: string, played: readonly OutageResult["timeline"][], plan: MeasurePlan): Timeline[] {
  return played.map((timeline, index) => ({
    id,
    outageMs: plan.outagesMs[index]!,
    faults: plan.schedules?.[index],
    stopAtMs: troubleStartMs(plan.schedules?.[index], plan.steadyMs),
    server: timeline?.server ?? [],
    client: timeline?.client ?? [],
  }));
}

/** The first seed's timelines of `entries`, each listed outage played whole on the pool, for the report. */
export async function firstSeedTimelines(
  entries: readonly Measured[],
  seed: number,
  plan: MeasurePlan,
  pool: WorkerPool,
): Promise<Map<string, Timeline[]>> {
  const played = await Promise.all(
    entries.map((entry) =>
      pool.run<NonNullable<OutageResult["timeline"]>[]>("timelines", { config: entry.config, seed, plan } satisfies TimelinesJob),
    ),
  );
  return new Map(entries.map((entry, index) => [entry.candidate.id, timelinesOf(entry.candidate.id, played[index]!, plan)]));
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
  const results: SeedResult[][] = entries.map(() => []);
  const jobs = entries.flatMap((_, entryIndex) =>
    seeds.map((seed, seedIndex) => ({ entryIndex, seed, keepTimelines: timelines !== undefined && seedIndex === 0 })),
  );
  await runJobs(entries, jobs, plan, pool, io, label, results);
  return summariesOf(entries, results, plan, { perSeed, timelines });
}

/** What a screened measure runs on, and which candidates it runs every seed for. */
export interface ScreenedRun {
  readonly seeds: readonly number[];
  readonly plan: MeasurePlan;
  readonly pool: WorkerPool;
  readonly io: ProgramIo;
  /** While there are at most this many entries, every one runs every seed at once (none could be left out). */
  readonly top: number;
  /** The candidates that must run every seed, among these summaries (some of them one seed's). */
  readonly named: (summaries: readonly CandidateSummary[]) => readonly CandidateSummary[];
}

/**
 * Screening, then the other seeds for the candidates that matter. Each set of entries added runs
 * the first seed; then, until every candidate `named` names (over every entry added so far) has run
 * every seed, those that have not run the others. A candidate never named keeps its first seed's
 * figures alone (its summary says how many seeds it ran).
 */
export class ScreenedMeasure {
  private readonly entries: Measured[] = [];
  private readonly results: SeedResult[][] = [];
  /** Each entry's summary over the seeds it has run, kept until it runs more: every round ranks every entry. */
  private readonly summaries: (CandidateSummary | undefined)[] = [];

  private readonly run: ScreenedRun;

  constructor(run: ScreenedRun) {
    this.run = run;
  }

  /** Measures `added` as above, with every entry added before; returns the summaries of every entry so far. */
  async add(added: readonly Measured[], label: string): Promise<CandidateSummary[]> {
    const { seeds, top } = this.run;
    const from = this.entries.length;
    this.entries.push(...added);
    this.results.push(...added.map(() => []));
    this.summaries.push(...added.map(() => undefined));
    const indices = added.map((_, offset) => from + offset);
    // Where the top holds every entry, nothing is screened out: every seed at once.
    if (this.entries.length <= top || seeds.length === 1) {
      await this.runSeeds(indices, seeds, label);
      return this.current();
    }
    await this.runSeeds(indices, seeds.slice(0, 1), `${label}, first seed`);
    for (;;) {
      const current = this.current();
      const indexOf = new Map(current.map((summary, index) => [summary, index]));
      const wanted = [...new Set(this.run.named(current))]
        .map((summary) => indexOf.get(summary)!)
        .filter((index) => this.results[index]!.length < seeds.length);
      if (wanted.length === 0) return current;
      const more = seeds.length - 1;
      await this.runSeeds(
        wanted,
        seeds.slice(1),
        `${label}, ${wanted.length} candidate${wanted.length === 1 ? "" : "s"} on ${more} more seed${more === 1 ? "" : "s"}`,
      );
    }
  }

  private async runSeeds(indices: readonly number[], seeds: readonly number[], label: string): Promise<void> {
    const jobs = indices.flatMap((entryIndex) => seeds.map((seed) => ({ entryIndex, seed, keepTimelines: false })));
    await runJobs(this.entries, jobs, this.run.plan, this.run.pool, this.run.io, label, this.results);
    for (const index of indices) this.summaries[index] = undefined;
  }

  /** Every entry's summary, each seed's alone added to `perSeed`. */
  finish(perSeed: Map<string, CandidateSummary[]>): CandidateSummary[] {
    this.entries.forEach((entry, index) => addPerSeed(perSeed, entry, this.results[index]!));
    return this.current();
  }

  private current(): CandidateSummary[] {
    return this.entries.map((entry, index) => (this.summaries[index] ??= summarize(entry.candidate, this.results[index]!)));
  }
}

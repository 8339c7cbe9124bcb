import type { ChainConfig } from "../sim/chain.ts";
import { type ChainReport, chainReport } from "../sim/chain-main.ts";

/*
 * What one chain candidate does with one seed and one fault schedule: the simulator's chain
 * run and its figures per tier (src/sim/chain-main.ts chainReport), as ./sim prints them.
 * Pure and deterministic: the same job gives the same result in any thread.
 */

export interface ChainJob {
  readonly candidateIndex: number;
  readonly scheduleIndex: number;
  readonly seed: number;
  /** The candidate's chain with the schedule's faults; its seed is replaced. */
  readonly config: ChainConfig;
}

export interface ChainRunResult {
  readonly candidateIndex: number;
  readonly scheduleIndex: number;
  readonly seed: number;
  readonly report: ChainReport;
}

export function measureChain(job: ChainJob): ChainRunResult {
  const report = chainReport({ ...job.config, seed: job.seed });
  return { candidateIndex: job.candidateIndex, scheduleIndex: job.scheduleIndex, seed: job.seed, report };
}

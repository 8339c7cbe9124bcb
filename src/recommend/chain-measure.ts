import type { ChainConfig } from "../config/chain-config.ts";
import { type ChainReport, chainReport } from "../runner/chain-report.ts";

/*
 * What one chain candidate does with one seed and one fault schedule: the simulator's chain
 * run and its figures per tier (src/runner/chain-report.ts chainReport), as ./sim prints them, and
 * the users' success within the SLO, counted as choose counts it for a single server
 * (measure.ts): over the requests that had the whole SLO before the run ended.
 * Pure and deterministic: the same job gives the same result in any thread.
 */

export interface ChainJob {
  readonly candidateIndex: number;
  readonly scheduleIndex: number;
  readonly seed: number;
  /** The candidate's chain with the schedule's faults; its seed is replaced. */
  readonly config: ChainConfig;
  /** The users' deadline: a request succeeds for its user when it succeeds within it, retries and waits included. */
  readonly sloMs: number;
}

export interface ChainSloCounts {
  /** The users' requests that started early enough to have the whole SLO before the run ended. */
  readonly requests: number;
  /** Those that succeeded within the SLO. */
  readonly withinSlo: number;
}

export interface ChainRunResult {
  readonly candidateIndex: number;
  readonly scheduleIndex: number;
  readonly seed: number;
  readonly report: ChainReport;
  readonly slo: ChainSloCounts;
}

export function measureChain(job: ChainJob): ChainRunResult {
  const cutoffMs = job.config.durationMs - job.sloMs;
  let requests = 0;
  let withinSlo = 0;
  const report = chainReport(
    { ...job.config, seed: job.seed },
    {
      onRequestStarted: (atMs) => {
        if (atMs <= cutoffMs) requests++;
      },
      onRequestEnded: (ok, latencyMs, _retried, atMs) => {
        if (ok && latencyMs <= job.sloMs && atMs - latencyMs <= cutoffMs) withinSlo++;
      },
    },
  );
  return { candidateIndex: job.candidateIndex, scheduleIndex: job.scheduleIndex, seed: job.seed, report, slo: { requests, withinSlo } };
}

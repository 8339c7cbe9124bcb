import { percentile } from "../model/percentile.ts";
import type { Candidate } from "./candidates.ts";
import { serverIsBack, type Verdict, worstVerdict } from "../model/verdict.ts";
import type { SeedResult } from "./measure.ts";

/*
 * One candidate's figures over its seeds: pooled where counts add up (success rate,
 * amplification, latency percentiles), the worst seed where a margin matters (recovery
 * times, peak load, the longest outage survived).
 */

export interface EverydaySummary {
  /** Requests that eventually succeeded ÷ requests that ended (succeeded or given up). */
  readonly successRate: number;
  /** Attempts ÷ requests (first attempts). */
  readonly amplification: number;
  /** 99th percentile of the successful requests' latency, first attempt to success; undefined without any. */
  readonly p99Ms: number | undefined;
  readonly requests: number;
}

export interface OutageSummary {
  readonly outageMs: number;
  /** Each seed's verdict, in seed order. */
  readonly verdicts: readonly Verdict[];
  /** The worst verdict over the seeds. */
  readonly verdict: Verdict;
  /** The server came back with every seed (each verdict recovered or recovering). */
  readonly survived: boolean;
  /** The slowest seed's server recovery; null when some seed never recovered. */
  readonly serverRecoveryMs: number | null;
  /** The slowest seed's client recovery; null when some seed's clients never came back. */
  readonly clientRecoveryMs: number | null;
  /** The worst outage window's attempts per second ÷ the baseline OK rate; null when no window fell inside the outage. */
  readonly peakLoad: number | null;
  /** Mean over seeds of the requests served after their client had given up. */
  readonly servedForNobody: number;
}

export interface CandidateSummary {
  readonly candidate: Candidate;
  readonly seeds: number;
  readonly everyday: EverydaySummary;
  readonly outages: readonly OutageSummary[];
  /** The longest outage survived with every seed (the smallest over seeds); 0 for none. */
  readonly longestSurvivedMs: number;
  /** It survived even the longest outage tried, with every seed. */
  readonly longestIsAtLeast: boolean;
  readonly survivesAll: boolean;
  readonly listedSurvived: number;
  readonly simulations: number;
}

/** Merges sorted arrays into one sorted array. */
function mergeSorted(arrays: readonly Float64Array[]): Float64Array {
  const merged = new Float64Array(arrays.reduce((sum, array) => sum + array.length, 0));
  let offset = 0;
  for (const array of arrays) {
    merged.set(array, offset);
    offset += array.length;
  }
  return merged.sort();
}

const worstOf = (values: readonly (number | undefined)[]): number | null =>
  values.some((value) => value === undefined) ? null : Math.max(...(values as number[]));

export function summarize(candidate: Candidate, results: readonly SeedResult[]): CandidateSummary {
  if (results.length === 0) throw new Error(`no results for ${candidate.id}`);
  const requests = results.reduce((sum, result) => sum + result.everyday.requests, 0);
  const succeeded = results.reduce((sum, result) => sum + result.everyday.succeeded, 0);
  const attempts = results.reduce((sum, result) => sum + result.everyday.attempts, 0);
  const firstAttempts = results.reduce((sum, result) => sum + result.everyday.firstAttempts, 0);
  const latencies = mergeSorted(results.map((result) => result.everyday.latenciesMs));
  const outages = results[0]!.outages.map((first, index): OutageSummary => {
    const runs = results.map((result) => result.outages[index]!);
    const verdicts = runs.map((run) => run.verdict);
    const peaks = runs.map((run) =>
      run.metrics.baselineOkPerSec > 0 && run.outageWindows > 0 ? run.metrics.peakAmplification : undefined,
    );
    return {
      outageMs: first.outageMs,
      verdicts,
      verdict: worstVerdict(verdicts),
      survived: verdicts.every(serverIsBack),
      serverRecoveryMs: worstOf(runs.map((run) => run.metrics.serverRecoveryMs)),
      clientRecoveryMs: worstOf(runs.map((run) => run.metrics.clientRecoveryMs)),
      peakLoad: peaks.every((peak) => peak === undefined) ? null : Math.max(...peaks.map((peak) => peak ?? 0)),
      servedForNobody: runs.reduce((sum, run) => sum + run.servedForNobody, 0) / runs.length,
    };
  });
  return {
    candidate,
    seeds: results.length,
    everyday: {
      successRate: requests > 0 ? succeeded / requests : 0,
      amplification: firstAttempts > 0 ? attempts / firstAttempts : 1,
      p99Ms: percentile(latencies, 0.99),
      requests,
    },
    outages,
    longestSurvivedMs: Math.min(...results.map((result) => result.longest.survivedMs)),
    longestIsAtLeast: results.every((result) => result.longest.collapsedMs === undefined),
    survivesAll: outages.every((outage) => outage.survived),
    listedSurvived: outages.filter((outage) => outage.survived).length,
    simulations: results.reduce((sum, result) => sum + result.simulations, 0),
  };
}

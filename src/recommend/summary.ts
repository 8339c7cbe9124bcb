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
  /** Requests that succeeded within the SLO ÷ requests that had the whole SLO to do so. */
  readonly sloSuccess: number;
  /** Latency of the successful requests that took more than one try, first try to success: median and 99th percentile. */
  readonly retriedP50Ms: number | undefined;
  readonly retriedP99Ms: number | undefined;
  /** How many successful requests took more than one try. */
  readonly retried: number;
  /** Each figure's spread across seeds: the largest seed's value less the smallest (0 with one seed). */
  readonly spread: EverydaySpread;
}

export interface EverydaySpread {
  readonly successRate: number;
  readonly sloSuccess: number;
  readonly amplification: number;
  readonly retriedP50Ms: number;
  readonly retriedP99Ms: number;
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

/** Largest less smallest of the seeds' values that exist; 0 with fewer than two. */
export function spreadOf(values: readonly (number | undefined)[]): number {
  const present = values.filter((value): value is number => value !== undefined && Number.isFinite(value));
  return present.length < 2 ? 0 : Math.max(...present) - Math.min(...present);
}

const sloSuccessOf = (withinSlo: number, sloRequests: number) => (sloRequests > 0 ? withinSlo / sloRequests : 0);

const worstOf = (values: readonly (number | undefined)[]): number | null =>
  values.some((value) => value === undefined) ? null : Math.max(...(values as number[]));

export function summarize(candidate: Candidate, results: readonly SeedResult[]): CandidateSummary {
  if (results.length === 0) throw new Error(`no results for ${candidate.id}`);
  const requests = results.reduce((sum, result) => sum + result.everyday.requests, 0);
  const succeeded = results.reduce((sum, result) => sum + result.everyday.succeeded, 0);
  const attempts = results.reduce((sum, result) => sum + result.everyday.attempts, 0);
  const firstAttempts = results.reduce((sum, result) => sum + result.everyday.firstAttempts, 0);
  const latencies = mergeSorted(results.map((result) => result.everyday.latenciesMs));
  const retriedLatencies = mergeSorted(results.map((result) => result.everyday.retriedLatenciesMs));
  const sloRequests = results.reduce((sum, result) => sum + result.everyday.sloRequests, 0);
  const withinSlo = results.reduce((sum, result) => sum + result.everyday.withinSlo, 0);
  const perSeed = (figure: (everyday: SeedResult["everyday"]) => number | undefined) =>
    spreadOf(results.map((result) => figure(result.everyday)));
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
      sloSuccess: sloSuccessOf(withinSlo, sloRequests),
      retriedP50Ms: percentile(retriedLatencies, 0.5),
      retriedP99Ms: percentile(retriedLatencies, 0.99),
      retried: retriedLatencies.length,
      spread: {
        successRate: perSeed((everyday) => (everyday.requests > 0 ? everyday.succeeded / everyday.requests : undefined)),
        sloSuccess: perSeed((everyday) => (everyday.sloRequests > 0 ? sloSuccessOf(everyday.withinSlo, everyday.sloRequests) : undefined)),
        amplification: perSeed((everyday) => (everyday.firstAttempts > 0 ? everyday.attempts / everyday.firstAttempts : undefined)),
        retriedP50Ms: perSeed((everyday) => percentile(everyday.retriedLatenciesMs, 0.5)),
        retriedP99Ms: perSeed((everyday) => percentile(everyday.retriedLatenciesMs, 0.99)),
      },
    },
    outages,
    longestSurvivedMs: Math.min(...results.map((result) => result.longest.survivedMs)),
    longestIsAtLeast: results.every((result) => result.longest.collapsedMs === undefined),
    survivesAll: outages.every((outage) => outage.survived),
    listedSurvived: outages.filter((outage) => outage.survived).length,
    simulations: results.reduce((sum, result) => sum + result.simulations, 0),
  };
}

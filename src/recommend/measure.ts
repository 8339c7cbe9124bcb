import type { Fault } from "../model/faults/fault-schedule.ts";
import { playedAs } from "../model/faults/kinds.ts";
import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { ClientWindow, ServerSample } from "../model/timeline.ts";
import { serverIsBack, type Verdict } from "../model/verdict.ts";
import { figuresOf, simulate } from "../runner/simulate.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";

/*
 * What one candidate does with one seed: an everyday run (no outage), one run per listed
 * outage, and a bisection for the longest outage after which the server still recovers.
 * Pure and deterministic: the same job gives the same result in any thread.
 */

export interface MeasurePlan {
  readonly steadyMs: number;
  readonly observeMs: number;
  readonly everydayMs: number;
  /** The users' deadline: a request succeeds for its user when it succeeds within it, retries and waits included. */
  readonly sloMs: number;
  readonly outagesMs: readonly number[];
  /** With -faults: the schedule that replaces each listed outage (times from the run's start). */
  readonly schedules?: readonly (readonly Fault[])[] | undefined;
  /** The bisection's range and resolution. */
  readonly minOutageMs: number;
  readonly maxOutageMs: number;
  /** Stop bisecting when collapsed ÷ survived is at most this… */
  readonly bisectionRatio: number;
  /** …or when they are at most this far apart. */
  readonly bisectionMs: number;
}

export interface MeasureJob {
  readonly candidateIndex: number;
  readonly seed: number;
  /** The candidate's simulation; its outages, duration and seed are replaced. */
  readonly config: SimulationConfig;
  readonly plan: MeasurePlan;
  /** Keep the timelines of the outage runs (for the report's charts). */
  readonly keepTimelines: boolean;
}

export interface EverydayResult {
  /** Requests that ended: succeeded or given up. */
  readonly requests: number;
  readonly succeeded: number;
  /** Attempts started, and those of them that were first attempts (one per request). */
  readonly attempts: number;
  readonly firstAttempts: number;
  /** Latency of every successful request, first attempt to success, sorted. */
  readonly latenciesMs: Float64Array;
  /** The same for the successful requests that took more than one try, sorted. */
  readonly retriedLatenciesMs: Float64Array;
  /**
   * Requests whose first try came at least the SLO before the end of the run (so that each
   * had the whole SLO to succeed, those still open at the end included)…
   */
  readonly sloRequests: number;
  /** …and those of them that succeeded within the SLO. */
  readonly withinSlo: number;
}

export interface OutageResult {
  readonly outageMs: number;
  readonly metrics: ScenarioMetrics;
  /** The model's verdict (src/model/verdict.ts), as metrics.verdict. */
  readonly verdict: Verdict;
  /**
   * Requests the server completed after their client had given up (the work done for
   * nobody), from the stop to the end of the observation.
   */
  readonly servedForNobody: number;
  /** Client windows wholly inside the outage: where the outage load was measured (none for an outage shorter than a window). */
  readonly outageWindows: number;
  readonly timeline: { readonly server: ServerSample[]; readonly client: ClientWindow[] } | undefined;
}

export interface LongestOutage {
  /** The longest outage tried after which the server recovered; 0 if it did not recover from the shortest. */
  readonly survivedMs: number;
  /** The shortest outage tried after which it did not; undefined if it recovered even from the longest. */
  readonly collapsedMs: number | undefined;
}

export interface SeedResult {
  readonly candidateIndex: number;
  readonly seed: number;
  readonly everyday: EverydayResult;
  readonly outages: readonly OutageResult[];
  readonly longest: LongestOutage;
  /** Simulations this job ran, and the virtual-clock events they fired. */
  readonly simulations: number;
  readonly events: number;
}

export function measure(job: MeasureJob): SeedResult {
  let simulations = 0;
  let events = 0;
  const { plan, config, seed } = job;

  const latencies: number[] = [];
  const retriedLatencies: number[] = [];
  let requests = 0;
  let succeeded = 0;
  let sloRequests = 0;
  let withinSlo = 0;
  const sloCutoffMs = plan.everydayMs - plan.sloMs;
  const everydayRun = simulate({ ...config, seed, outages: [], durationMs: plan.everydayMs }, undefined, {
    // The figures come from the requests' ends and the windows' rates: no window's histogram is kept.
    windowHistograms: false,
    onRequestStarted: (atMs) => {
      if (atMs <= sloCutoffMs) sloRequests++;
    },
    onRequestEnded: (ok, latencyMs, retried, atMs) => {
      requests++;
      if (!ok) return;
      succeeded++;
      latencies.push(latencyMs);
      if (retried) retriedLatencies.push(latencyMs);
      if (latencyMs <= plan.sloMs && atMs - latencyMs <= sloCutoffMs) withinSlo++;
    },
  });
  simulations++;
  events += everydayRun.events;
  const counts = everydayRun.totals.counts;
  const everyday: EverydayResult = {
    requests,
    succeeded,
    attempts: counts.attempts,
    firstAttempts: counts.attempts - counts.retries,
    latenciesMs: Float64Array.from(latencies).sort(),
    retriedLatenciesMs: Float64Array.from(retriedLatencies).sort(),
    sloRequests,
    withinSlo,
  };

  const runOutage = (outageMs: number, keepTimeline: boolean, schedule?: readonly Fault[]): OutageResult => {
    // What the ranking reads of a run is whole when it ends once the server cannot come back; a run whose timeline is kept goes on.
    const outcome = outageRun(config, seed, plan, outageMs, { keepTimeline, schedule, haltWhenCollapsed: !keepTimeline });
    simulations++;
    events += outcome.events;
    return outcome.result;
  };

  const outages = plan.outagesMs.map((outageMs, index) => runOutage(outageMs, job.keepTimelines, plan.schedules?.[index]));
  const recovers = (outageMs: number) => serverIsBack(runOutage(outageMs, false).verdict);
  // The bisection is over stops: fault schedules tell it nothing about them.
  const longest = longestSurvived(plan, plan.schedules === undefined ? outages : [], recovers);
  return { candidateIndex: job.candidateIndex, seed, everyday, outages, longest, simulations, events };
}

/** One candidate's listed outages with one seed, played whole for their timelines (the report's charts). */
export interface TimelinesJob {
  readonly config: SimulationConfig;
  readonly seed: number;
  readonly plan: MeasurePlan;
}

/** The timelines of a candidate's listed outages (or schedules) with one seed, as measure() keeps them with keepTimelines. */
export function outageTimelines(job: TimelinesJob): NonNullable<OutageResult["timeline"]>[] {
  return job.plan.outagesMs.map(
    (outageMs, index) =>
      outageRun(job.config, job.seed, job.plan, outageMs, { keepTimeline: true, schedule: job.plan.schedules?.[index] }).result.timeline!,
  );
}

/**
 * Bisection, on a logarithmic scale, for the longest outage after which the server still
 * recovers, as `./sim -find-critical-outage` does, started from what the listed outages
 * already showed: the longest that survived below the shortest that collapsed.
 */
export function longestSurvived(
  plan: Pick<MeasurePlan, "minOutageMs" | "maxOutageMs" | "bisectionRatio" | "bisectionMs">,
  known: readonly Pick<OutageResult, "outageMs" | "verdict">[],
  recovers: (outageMs: number) => boolean,
): LongestOutage {
  const collapsed = known.filter((run) => !serverIsBack(run.verdict)).map((run) => run.outageMs);
  let high: number | undefined = collapsed.length > 0 ? Math.min(...collapsed) : undefined;
  const survived = known
    .filter((run) => serverIsBack(run.verdict) && (high === undefined || run.outageMs < high))
    .map((run) => run.outageMs);
  let low: number | undefined = survived.length > 0 ? Math.max(...survived) : undefined;
  if (low === undefined) {
    if (high !== undefined && high <= plan.minOutageMs) return { survivedMs: 0, collapsedMs: high };
    if (!recovers(plan.minOutageMs)) return { survivedMs: 0, collapsedMs: plan.minOutageMs };
    low = plan.minOutageMs;
  }
  if (high === undefined) {
    if (low >= plan.maxOutageMs || recovers(plan.maxOutageMs)) return { survivedMs: plan.maxOutageMs, collapsedMs: undefined };
    high = plan.maxOutageMs;
  }
  while (high / low > plan.bisectionRatio && high - low > plan.bisectionMs) {
    const middle = Math.round(Math.sqrt(low * high));
    if (middle <= low || middle >= high) break;
    if (recovers(middle)) low = middle;
    else high = middle;
  }
  return { survivedMs: low, collapsedMs: high };
}

/** When a run's trouble begins: its schedule's first fault, or the stop after the steady state. */
export const troubleStartMs = (schedule: readonly Fault[] | undefined, steadyMs: number): number =>
  schedule === undefined ? steadyMs : Math.min(...schedule.map((fault) => fault.atMs));

/** How one outage run is played and judged besides its config, seed, plan and outage. */
export interface OutageRunOptions {
  /** Keep the server's and the client's timeline for the report. */
  readonly keepTimeline?: boolean;
  /** The scenario's faults in place of one stop of `outageMs` after the steady phase. */
  readonly schedule?: readonly Fault[] | undefined;
  /** Judged as a watched service's prediction is (-validate -target): src/model/verdict.ts readAsWatcher. */
  readonly readAsWatcher?: boolean;
  /**
   * End the run once the server cannot come back under its line by the end (SimulationHooks.haltOnceDown,
   * one client window after the resume at the earliest), judged collapsed. What the ranking reads of it
   * is then the whole run's: the verdict, the recovery times (none), the load during the outage, the
   * work served for nobody (nothing completes any more); the metrics after the resume (peak, goodput)
   * are of a shorter run. Only for a stop, not a fault schedule.
   */
  readonly haltWhenCollapsed?: boolean;
}

/**
 * One run with one outage after the steady state, observed for `plan.observeMs`; with a
 * `schedule`, its faults instead (times from the run's start; `outageMs` is when the last
 * one ends).
 */
export function outageRun(
  config: SimulationConfig,
  seed: number,
  plan: Pick<MeasurePlan, "steadyMs" | "observeMs">,
  outageMs: number,
  options: OutageRunOptions = {},
): { result: OutageResult; events: number } {
  const { keepTimeline = false, schedule, readAsWatcher = false } = options;
  const ended = playOutage(config, seed, plan, outageMs, options);
  // Clients back before a collapse for good: the whole run could still run out of memory later, which
  // takes their recovery back (src/model/verdict.ts); so rare that the whole run is simply played.
  return ended.halted && ended.result.metrics.clientRecoveryMs !== undefined
    ? playOutage(config, seed, plan, outageMs, { keepTimeline, schedule, readAsWatcher })
    : ended;
}

function playOutage(
  config: SimulationConfig,
  seed: number,
  plan: Pick<MeasurePlan, "steadyMs" | "observeMs">,
  outageMs: number,
  options: OutageRunOptions,
): { result: OutageResult; events: number; halted: boolean } {
  const { keepTimeline = false, schedule, readAsWatcher = false, haltWhenCollapsed = false } = options;
  const overloadAbove = figuresOf(config).overloadAbove;
  // A schedule's times are from the run's start, as in ./sim and the demo (one scenario file means the same run in all three).
  const faults = schedule ?? [{ kind: "stop" as const, atMs: plan.steadyMs, durationMs: outageMs, factor: 1 }];
  const resumeAtMs = schedule === undefined ? plan.steadyMs + outageMs : outageMs;
  const phases = {
    stopAtMs: troubleStartMs(schedule, plan.steadyMs),
    resumeAtMs,
    endMs: resumeAtMs + plan.observeMs,
    faults: schedule === undefined ? undefined : faults,
  };
  const outages = faults.filter((fault) => playedAs(fault, "pause")).map(({ atMs, durationMs }) => ({ atMs, durationMs }));
  const others = faults.filter((fault) => !playedAs(fault, "pause"));
  let abandonedBeforeStop = 0;
  let abandonedAtEnd = 0;
  const run = simulate(
    { ...config, seed, outages, faults: others, durationMs: phases.endMs },
    (event) => {
      if (event.kind !== "server") return;
      if (event.atMs <= phases.stopAtMs) abandonedBeforeStop = event.snapshot.abandoned;
      abandonedAtEnd = event.snapshot.abandoned;
    },
    {
      windowHistograms: false,
      haltOnceDown:
        haltWhenCollapsed && schedule === undefined && !readAsWatcher
          ? { above: overloadAbove, notBeforeMs: resumeAtMs + config.intervalMs }
          : undefined,
    },
  );
  const metrics = computeMetrics(run.server, run.client, phases, overloadAbove, {
    outOfMemory: run.outOfMemory,
    readAsWatcher,
  });
  return {
    result: {
      outageMs,
      metrics,
      // Cut short above the line, which it stays above to the end: the server does not come back.
      verdict: run.haltedDown ? "collapsed" : metrics.verdict,
      servedForNobody: abandonedAtEnd - abandonedBeforeStop,
      outageWindows: run.client.filter((window) => window.startMs >= phases.stopAtMs && window.endMs <= phases.resumeAtMs).length,
      timeline: keepTimeline ? { server: run.server, client: run.client } : undefined,
    },
    events: run.events,
    halted: run.haltedDown,
  };
}

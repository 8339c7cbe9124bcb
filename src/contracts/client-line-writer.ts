import { encodeLatencyHistogram } from "../model/latency-histogram.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import { perSecond, retryShare, type WindowReport } from "../model/window-stats.ts";
import type { ClientNotStartedLine, ClientReport, ClientSummaryLine, ClientWindowLine } from "./client-line.ts";

/* The writers of the client's lines; their contract (schemas, types, reader) is client-line.ts. */

/** The report fields of one window (or of the whole run, for a summary). */
export function clientReport(report: WindowReport, inFlight: number, epochMs: number, openLoop?: OpenLoopTotals): ClientReport {
  const { counts } = report;
  return {
    time: new Date(epochMs).toISOString(),
    epochMs,
    windowMs: report.endMs - report.startMs,
    ok: counts.ok,
    errors: counts.errors,
    timedout: counts.timedout,
    gaveUp: counts.gaveUp,
    attempts: counts.attempts,
    retries: counts.retries,
    throttled: counts.throttled,
    rejected: counts.rejected,
    okPerSec: perSecond(counts.ok, report),
    errorsPerSec: perSecond(counts.errors, report),
    timedoutPerSec: perSecond(counts.timedout, report),
    gaveUpPerSec: perSecond(counts.gaveUp, report),
    attemptsPerSec: perSecond(counts.attempts, report),
    retriesPerSec: perSecond(counts.retries, report),
    throttledPerSec: perSecond(counts.throttled, report),
    rejectedPerSec: perSecond(counts.rejected, report),
    retryShare: retryShare(counts),
    inFlight,
    errorKinds: counts.errorKinds,
    latencyMs: report.latency === undefined ? null : { p50: report.latency.p50Ms, p99: report.latency.p99Ms, max: report.latency.maxMs },
    ...(openLoop === undefined ? {} : { aliveChains: openLoop.aliveChains, droppedArrivals: openLoop.droppedArrivals }),
  };
}

/** Where a window sits on the grid, and its shard. */
export interface WindowPlacement {
  readonly gridEpochMs: number;
  readonly shard?: string | undefined;
  readonly partial?: boolean;
}

/**
 * The client's -json window: clientReport's fields, then where the window sits on the grid
 * and its OK latencies as an HdrHistogram, so that `thundering-herd merge` can combine shards exactly.
 */
export function clientWindowLine(
  report: WindowReport,
  inFlight: number,
  epochMs: number,
  placement: WindowPlacement,
  openLoop?: OpenLoopTotals,
): ClientWindowLine {
  return {
    ...clientReport(report, inFlight, epochMs, openLoop),
    gridEpochMs: placement.gridEpochMs,
    ...(placement.shard === undefined ? {} : { shard: placement.shard }),
    latencyHistogram: report.histogram === undefined ? null : encodeLatencyHistogram(report.histogram),
    ...(placement.partial === true ? { partial: true as const } : {}),
  };
}

/** The client's -json summary: totals of the whole run, with their histogram. */
export function clientSummaryLine(
  totals: WindowReport,
  reason: string,
  epochMs: number,
  shard?: string,
  openLoop?: OpenLoopTotals,
): ClientSummaryLine {
  return {
    summary: true,
    reason,
    ...clientReport(totals, 0, epochMs, openLoop),
    ...(shard === undefined ? {} : { shard }),
    latencyHistogram: totals.histogram === undefined ? null : encodeLatencyHistogram(totals.histogram),
  };
}

export function clientNotStartedLine(reason: string): ClientNotStartedLine {
  return { summary: true, reason, started: false };
}

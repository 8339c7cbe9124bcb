import { encodeLatencyHistogram, type LatencySummary } from "../model/latency-histogram.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import { perSecond, retryShare, type WindowReport } from "../model/window-stats.ts";
import type { ClientNotStartedLine, ClientReport, ClientSummaryLine, ClientWindowLine } from "./client-line.ts";

/* The writers of the client's lines; their contract (schemas, types, reader) is client-line.ts. */

/**
 * What a real client says about itself in a window: its event loop's delay and whether it
 * fell behind (src/model/client-behind.ts), beside the lateness its statistics measured.
 */
export interface ClientSelf {
  /** The event loop's delay (the worst thread's); undefined when not measured. */
  readonly eventLoopDelay: LatencySummary | undefined;
  /** Why the client fell behind; undefined when it kept up. */
  readonly behind: string | undefined;
}

const percentiles = (summary: LatencySummary | undefined) =>
  summary === undefined ? null : { p50: summary.p50Ms, p99: summary.p99Ms, max: summary.maxMs };

const histogram = (value: WindowReport["histogram"]) => (value === undefined ? null : encodeLatencyHistogram(value));

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
    latencyMs: percentiles(report.latency),
    notSent: counts.notSent,
    lateness: percentiles(report.lateness),
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
  self: ClientSelf,
  openLoop?: OpenLoopTotals,
): ClientWindowLine {
  return {
    ...clientReport(report, inFlight, epochMs, openLoop),
    eventLoopDelayMs: percentiles(self.eventLoopDelay),
    behind: self.behind !== undefined,
    behindReason: self.behind ?? null,
    gridEpochMs: placement.gridEpochMs,
    ...(placement.shard === undefined ? {} : { shard: placement.shard }),
    latencyHistogram: histogram(report.histogram),
    latenessHistogram: histogram(report.latenessHistogram),
    ...(placement.partial === true ? { partial: true as const } : {}),
  };
}

/** The client's -json summary: totals of the whole run, with their histogram. */
export function clientSummaryLine(
  totals: WindowReport,
  reason: string,
  epochMs: number,
  shard: string | undefined,
  behindWindows: number,
  openLoop?: OpenLoopTotals,
): ClientSummaryLine {
  return {
    summary: true,
    reason,
    ...clientReport(totals, 0, epochMs, openLoop),
    ...(shard === undefined ? {} : { shard }),
    latencyHistogram: histogram(totals.histogram),
    latenessHistogram: histogram(totals.latenessHistogram),
    behindWindows,
    behind: behindWindows > 0,
  };
}

export function clientNotStartedLine(reason: string): ClientNotStartedLine {
  return { summary: true, reason, started: false };
}

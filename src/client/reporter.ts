import { formatDuration } from "../cli/duration.ts";
import { encodeLatencyHistogram } from "../model/latency-histogram.ts";
import { perSecond, type WindowReport } from "../model/window-stats.ts";

const rate = (count: number, report: WindowReport) => perSecond(count, report).toFixed(2);

/** Latencies shown to the microsecond, in Go notation. */
const latency = (ms: number) => formatDuration(Math.round(ms * 1000) / 1000);

/**
 * The reference client's line, exactly, then our extra fields:
 * `OK: 98.00 req/sec, errors: 0.00 req/sec, timedout: 0.00 req/sec, gave up: …`, ending with
 * the attempts the client refused itself (throttled, rejected by an open breaker) and the
 * share of the attempts sent that were retries.
 */
export function formatClientLine(report: WindowReport, inFlight: number): string {
  const { counts } = report;
  const head =
    `OK: ${rate(counts.ok, report)} req/sec, errors: ${rate(counts.errors, report)} req/sec, ` +
    `timedout: ${rate(counts.timedout, report)} req/sec`;
  const percentiles =
    report.latency === undefined ? "p50: -, p99: -" : `p50: ${latency(report.latency.p50Ms)}, p99: ${latency(report.latency.p99Ms)}`;
  return (
    `${head}, gave up: ${rate(counts.gaveUp, report)} req/sec, in flight: ${inFlight}, ${percentiles}, ` +
    `throttled: ${rate(counts.throttled, report)} req/sec, rejected: ${rate(counts.rejected, report)} req/sec, ` +
    `retries: ${percent(retryShare(counts))} of attempts`
  );
}

/** Retries among the attempts sent, as a fraction; 0 when none was sent. */
export function retryShare(counts: { attempts: number; retries: number }): number {
  return counts.attempts > 0 ? counts.retries / counts.attempts : 0;
}

const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

/** One JSON object per window: every counter, rates, error kinds and latency percentiles. */
export function clientReport(report: WindowReport, inFlight: number, epochMs: number) {
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
  };
}

/** The end-of-run summary: totals and rates over the whole run. */
export function formatClientSummary(totals: WindowReport): string {
  const { counts } = totals;
  const seconds = ((totals.endMs - totals.startMs) / 1000).toFixed(1);
  const part = (label: string, count: number) => `${label} ${count} (${rate(count, totals)} req/sec)`;
  const latencyPart =
    totals.latency === undefined
      ? ""
      : `, OK latency p50 ${latency(totals.latency.p50Ms)} p99 ${latency(totals.latency.p99Ms)} max ${latency(totals.latency.maxMs)}`;
  return (
    `summary: ${seconds}s, ${part("attempts", counts.attempts)}, ${part("OK", counts.ok)}, ` +
    `${part("errors", counts.errors)}, ${part("timedout", counts.timedout)}, ${part("gave up", counts.gaveUp)}` +
    `${counts.throttled > 0 ? `, ${part("throttled", counts.throttled)}` : ""}${counts.rejected > 0 ? `, ${part("rejected", counts.rejected)}` : ""}` +
    `, retries ${percent(retryShare(counts))} of attempts${latencyPart}`
  );
}

/** What an open-loop source reports besides the herd's counters. */
export interface OpenLoopTotals {
  readonly aliveChains: number;
  readonly droppedArrivals: number;
}

/** Extra JSON fields in open-loop mode: requests alive now, arrivals dropped so far (-max-chains). */
export function openLoopFields(source: OpenLoopTotals) {
  return { aliveChains: source.aliveChains, droppedArrivals: source.droppedArrivals };
}

/** The same, appended to the text line and the summary. */
export function openLoopSuffix(source: OpenLoopTotals): string {
  return `, alive: ${source.aliveChains}, dropped arrivals: ${source.droppedArrivals}`;
}

/** What a window's JSON carries besides clientReport, for merging shards. */
export interface WindowPlacement {
  /** The end of the window's slot on the window grid (epoch ms): the same on every shard with the same -start-at. */
  readonly gridEpochMs: number;
  /** `i/n` when the herd is sharded. */
  readonly shard?: string | undefined;
  /** The run ended before the window's slot did. */
  readonly partial?: boolean;
}

/**
 * The client's -json window: clientReport's fields, then where the window sits on the grid
 * and its OK latencies as an HdrHistogram (compressed base64, null when none), so that
 * `thundering-herd merge` can combine shards exactly.
 */
export function clientWindowJson(report: WindowReport, inFlight: number, epochMs: number, placement: WindowPlacement) {
  return {
    ...clientReport(report, inFlight, epochMs),
    gridEpochMs: placement.gridEpochMs,
    ...(placement.shard === undefined ? {} : { shard: placement.shard }),
    latencyHistogram: report.histogram === undefined ? null : encodeLatencyHistogram(report.histogram),
    ...(placement.partial === true ? { partial: true } : {}),
  };
}

/** The client's -json summary: totals of the whole run, with their histogram. */
export function clientSummaryJson(totals: WindowReport, reason: string, epochMs: number, shard?: string) {
  return {
    summary: true,
    reason,
    ...clientReport(totals, 0, epochMs),
    ...(shard === undefined ? {} : { shard }),
    latencyHistogram: totals.histogram === undefined ? null : encodeLatencyHistogram(totals.histogram),
  };
}

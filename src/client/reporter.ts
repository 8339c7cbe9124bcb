import { formatDuration } from "../cli/duration.ts";
import { encodeLatencyHistogram, type LatencySummary } from "../model/latency-histogram.ts";
import { perSecond, type WindowReport } from "../model/window-stats.ts";

const rate = (count: number, report: WindowReport) => perSecond(count, report).toFixed(2);

/** Latencies shown to the microsecond, in Go notation. */
const latency = (ms: number) => formatDuration(Math.round(ms * 1000) / 1000);

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

const summaryJson = (summary: LatencySummary | undefined) =>
  summary === undefined ? null : { p50: summary.p50Ms, p99: summary.p99Ms, max: summary.maxMs };

/** The client's own figures for the text line, after the reference's fields. */
function selfSuffix(report: WindowReport, self: ClientSelf): string {
  const lateness =
    report.lateness === undefined
      ? "lateness: -"
      : `lateness p99: ${latency(report.lateness.p99Ms)}, max: ${latency(report.lateness.maxMs)}`;
  const loop = self.eventLoopDelay === undefined ? "" : `, loop delay p99: ${latency(self.eventLoopDelay.p99Ms)}`;
  const notSent = report.counts.notSent > 0 ? `, not sent: ${report.counts.notSent}` : "";
  const behind = self.behind === undefined ? "" : `, CLIENT BEHIND (not the server's figures): ${self.behind}`;
  return `, ${lateness}${loop}${notSent}${behind}`;
}

/**
 * The reference client's line, exactly, then our extra fields:
 * `OK: 98.00 req/sec, errors: 0.00 req/sec, timedout: 0.00 req/sec, gave up: …`, ending with
 * the attempts the client refused itself (throttled, rejected by an open breaker) and the
 * share of the attempts sent that were retries.
 */
export function formatClientLine(report: WindowReport, inFlight: number, self?: ClientSelf): string {
  const { counts } = report;
  const head =
    `OK: ${rate(counts.ok, report)} req/sec, errors: ${rate(counts.errors, report)} req/sec, ` +
    `timedout: ${rate(counts.timedout, report)} req/sec`;
  const percentiles =
    report.latency === undefined ? "p50: -, p99: -" : `p50: ${latency(report.latency.p50Ms)}, p99: ${latency(report.latency.p99Ms)}`;
  return (
    `${head}, gave up: ${rate(counts.gaveUp, report)} req/sec, in flight: ${inFlight}, ${percentiles}, ` +
    `throttled: ${rate(counts.throttled, report)} req/sec, rejected: ${rate(counts.rejected, report)} req/sec, ` +
    `retries: ${percent(retryShare(counts))} of attempts` +
    (self === undefined ? "" : selfSuffix(report, self))
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
    latencyMs: summaryJson(report.latency),
    notSent: counts.notSent,
    /** How late the attempts went out against their planned instants, ms (0 on the simulator's clock). */
    lateness: summaryJson(report.lateness),
  };
}

/** A real client's figures about itself, for its -json lines. */
function selfJson(self: ClientSelf) {
  return {
    eventLoopDelayMs: summaryJson(self.eventLoopDelay),
    behind: self.behind !== undefined,
    behindReason: self.behind ?? null,
  };
}

/** The end-of-run summary: totals and rates over the whole run. */
export function formatClientSummary(totals: WindowReport, behindWindows?: number): string {
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
    `, retries ${percent(retryShare(counts))} of attempts${latencyPart}` +
    (behindWindows === undefined ? "" : selfSummary(totals, behindWindows))
  );
}

/** A real client's summary of itself: lateness over the run, attempts not sent, windows in which it fell behind. */
function selfSummary(totals: WindowReport, behindWindows: number): string {
  return (
    (totals.lateness === undefined ? "" : `, lateness p99 ${latency(totals.lateness.p99Ms)} max ${latency(totals.lateness.maxMs)}`) +
    (totals.counts.notSent > 0 ? `, not sent ${totals.counts.notSent}` : "") +
    (behindWindows === 0 ? "" : `, CLIENT BEHIND in ${behindWindows} window(s): those are not the server's figures`)
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
export function clientWindowJson(report: WindowReport, inFlight: number, epochMs: number, placement: WindowPlacement, self: ClientSelf) {
  return {
    ...clientReport(report, inFlight, epochMs),
    ...selfJson(self),
    gridEpochMs: placement.gridEpochMs,
    ...(placement.shard === undefined ? {} : { shard: placement.shard }),
    latencyHistogram: report.histogram === undefined ? null : encodeLatencyHistogram(report.histogram),
    latenessHistogram: report.latenessHistogram === undefined ? null : encodeLatencyHistogram(report.latenessHistogram),
    ...(placement.partial === true ? { partial: true } : {}),
  };
}

/** The client's -json summary: totals of the whole run, with their histogram. */
export function clientSummaryJson(totals: WindowReport, reason: string, epochMs: number, shard: string | undefined, behindWindows: number) {
  return {
    summary: true,
    reason,
    ...clientReport(totals, 0, epochMs),
    ...(shard === undefined ? {} : { shard }),
    latencyHistogram: totals.histogram === undefined ? null : encodeLatencyHistogram(totals.histogram),
    latenessHistogram: totals.latenessHistogram === undefined ? null : encodeLatencyHistogram(totals.latenessHistogram),
    /** Windows in which the client fell behind: their figures are the client's, not the server's. */
    behindWindows,
    behind: behindWindows > 0,
  };
}

import { formatDuration } from "../cli/duration.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import { perSecond, retryShare, type WindowReport } from "../model/window-stats.ts";
import type { ClientSelf } from "./client-line-writer.ts";

const rate = (count: number, report: WindowReport) => perSecond(count, report).toFixed(2);

/** Latencies shown to the microsecond, in Go notation. */
const latency = (ms: number) => formatDuration(Math.round(ms * 1000) / 1000);

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

const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

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

/** The same, appended to the text line and the summary. */
export function openLoopSuffix(source: OpenLoopTotals): string {
  return `, alive: ${source.aliveChains}, dropped arrivals: ${source.droppedArrivals}`;
}

import { addLatencyHistograms, exactMaximum, type LatencyHistogram, type LatencySummary, summarizeLatency } from "./latency-histogram.ts";
import type { ErrorKind } from "./outcome.ts";
import { type Counts, emptyCounts, type WindowReport } from "./window-stats.ts";

/** `counts` summed into a new Counts, error kinds kind by kind. */
export function addCounts(counts: readonly Counts[]): Counts {
  const sum = emptyCounts();
  for (const part of counts) {
    sum.ok += part.ok;
    sum.errors += part.errors;
    sum.timedout += part.timedout;
    sum.gaveUp += part.gaveUp;
    sum.attempts += part.attempts;
    sum.retries += part.retries;
    sum.throttled += part.throttled;
    sum.rejected += part.rejected;
    sum.notSent += part.notSent;
    for (const [kind, count] of Object.entries(part.errorKinds) as [ErrorKind, number][]) {
      sum.errorKinds[kind] = (sum.errorKinds[kind] ?? 0) + count;
    }
  }
  return sum;
}

/** Histograms added, and the percentiles read from the sum with the exact maximum of the parts. */
export function addSummarized(parts: readonly { histogram: LatencyHistogram | undefined; maxMs: number | undefined }[]): {
  histogram: LatencyHistogram | undefined;
  summary: LatencySummary | undefined;
} {
  const histogram = addLatencyHistograms(parts.map((part) => part.histogram));
  return { histogram, summary: histogram === undefined ? undefined : summarizeLatency(histogram, exactMaximum(parts)) };
}

/**
 * One window from the same window of several herds (worker threads, shards): counts add
 * up, latency and lateness histograms are added and the percentiles read from the sum
 * (percentiles cannot be averaged). The window spans them all unless `span` says otherwise.
 */
export function mergeWindowReports(reports: readonly WindowReport[], span?: { startMs: number; endMs: number }): WindowReport {
  if (reports.length === 0 && span === undefined) throw new Error("mergeWindowReports: nothing to merge");
  const latency = addSummarized(reports.map((report) => ({ histogram: report.histogram, maxMs: report.latency?.maxMs })));
  const lateness = addSummarized(reports.map((report) => ({ histogram: report.latenessHistogram, maxMs: report.lateness?.maxMs })));
  return {
    startMs: span?.startMs ?? Math.min(...reports.map((report) => report.startMs)),
    endMs: span?.endMs ?? Math.max(...reports.map((report) => report.endMs)),
    counts: addCounts(reports.map((report) => report.counts)),
    latency: latency.summary,
    histogram: latency.histogram,
    lateness: lateness.summary,
    latenessHistogram: lateness.histogram,
  };
}

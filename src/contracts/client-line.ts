import { z } from "zod";
import { encodeLatencyHistogram } from "../model/latency-histogram.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import type { ClientWindow } from "../model/timeline.ts";
import { perSecond, retryShare, type WindowReport } from "../model/window-stats.ts";
import { checkLine, jsonLines, type LinePlace, parseJsonObject } from "./json-line.ts";

/*
 * The client's -json lines: one per window, then one summary (or, stopped before it
 * started, a summary saying so). The simulator prints the window's report fields with
 * "source": "client". A new field is one entry in CLIENT_REPORT (optional if older lines
 * lack it) and one in clientReport().
 */

const COUNT = z.number().int().nonnegative();
const RATE = z.number().nonnegative();

/** The fields every window and summary carries: counters, rates, error kinds and OK latencies. */
const CLIENT_REPORT = z.object({
  time: z.string(),
  /** The end of the window (epoch ms), and its length. */
  epochMs: z.number(),
  windowMs: z.number().nonnegative(),
  ok: COUNT,
  errors: COUNT,
  timedout: COUNT,
  gaveUp: COUNT,
  attempts: COUNT,
  retries: COUNT,
  throttled: COUNT,
  rejected: COUNT,
  okPerSec: RATE,
  errorsPerSec: RATE,
  timedoutPerSec: RATE,
  gaveUpPerSec: RATE,
  attemptsPerSec: RATE,
  retriesPerSec: RATE,
  throttledPerSec: RATE,
  rejectedPerSec: RATE,
  retryShare: z.number().min(0).max(1),
  inFlight: COUNT,
  errorKinds: z.record(z.string(), COUNT),
  latencyMs: z.object({ p50: z.number(), p99: z.number(), max: z.number() }).nullable(),
  /** Open-loop mode only: requests alive now, arrivals dropped so far (-max-chains). */
  aliveChains: COUNT.optional(),
  droppedArrivals: COUNT.optional(),
});

/** Where a window sits, for merging shards; the simulator's lines have none of it. */
const PLACEMENT = {
  /** The end of the window's slot on the window grid (epoch ms): the same on every shard with the same -start-at. */
  gridEpochMs: z.number().optional(),
  /** `i/n` when the herd is sharded. */
  shard: z.string().optional(),
  /** OK latencies as an HdrHistogram, compressed and base64-encoded; null when none. */
  latencyHistogram: z.string().nullable().optional(),
};

export const CLIENT_WINDOW_LINE = CLIENT_REPORT.extend({
  ...PLACEMENT,
  /** The run ended before the window's slot did. */
  partial: z.literal(true).optional(),
});

export const CLIENT_SUMMARY_LINE = CLIENT_REPORT.extend({
  ...PLACEMENT,
  summary: z.literal(true),
  /** What ended the run: "duration", "SIGINT", … */
  reason: z.string(),
});

/** The client was stopped before its run started: nothing was sent. */
export const CLIENT_NOT_STARTED_LINE = z.object({ summary: z.literal(true), reason: z.string(), started: z.literal(false) });

export type ClientReport = z.infer<typeof CLIENT_REPORT>;
export type ClientWindowLine = z.infer<typeof CLIENT_WINDOW_LINE>;
export type ClientSummaryLine = z.infer<typeof CLIENT_SUMMARY_LINE>;
export type ClientNotStartedLine = z.infer<typeof CLIENT_NOT_STARTED_LINE>;
export type ClientLine =
  | ({ readonly kind: "window" } & ClientWindowLine)
  | ({ readonly kind: "summary" } & ClientSummaryLine)
  | ({ readonly kind: "not-started" } & ClientNotStartedLine);

const WHAT = "a client's -json output";

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

/** One line of a client's -json output, checked; a LineError naming the file and line otherwise. */
export function parseClientLine(text: string, place: LinePlace): ClientLine {
  const json = parseJsonObject(text, place, WHAT);
  if (json.summary !== true) return { kind: "window", ...checkLine(CLIENT_WINDOW_LINE, json, place, WHAT) };
  if (json.started === false) return { kind: "not-started", ...checkLine(CLIENT_NOT_STARTED_LINE, json, place, WHAT) };
  return { kind: "summary", ...checkLine(CLIENT_SUMMARY_LINE, json, place, WHAT) };
}

/** A window's line as a point of the client's timeline, in ms from `startEpochMs`. */
export function clientWindow(line: ClientReport, startEpochMs: number): ClientWindow {
  return {
    startMs: line.epochMs - line.windowMs - startEpochMs,
    endMs: line.epochMs - startEpochMs,
    okPerSec: line.okPerSec,
    errorsPerSec: line.errorsPerSec,
    timedoutPerSec: line.timedoutPerSec,
    attemptsPerSec: line.attemptsPerSec,
    retriesPerSec: line.retriesPerSec,
  };
}

/** The client's windows from its -json output (`lines` as in the file, numbered from 1); summaries left out. */
export function readClientWindows(lines: readonly string[], startEpochMs: number, file: string): ClientWindow[] {
  return jsonLines(lines).flatMap(({ text, line }) => {
    const parsed = parseClientLine(text, { file, line });
    return parsed.kind === "window" ? [clientWindow(parsed, startEpochMs)] : [];
  });
}

import { z } from "zod";
import type { ClientWindow } from "../model/timeline.ts";
import { checkLine, jsonLines, type LinePlace, parseJsonObject } from "./json-line.ts";

/*
 * The client's -json lines: one per window, then one summary (or, stopped before it
 * started, a summary saying so). The simulator prints the window's report fields with
 * "source": "client". Their types and the one reader are here; the writers are in
 * client-line-writer.ts, so that the programs that only write lines never load the
 * validator (zod's many files at start-up would not fit a process short of descriptors).
 * A new field is one entry in CLIENT_REPORT (optional if older lines lack it) and one in
 * clientReport().
 */

const COUNT = z.number().int().nonnegative();
const RATE = z.number().nonnegative();
const PERCENTILES = z.object({ p50: z.number(), p99: z.number(), max: z.number() });

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
  latencyMs: PERCENTILES.nullable(),
  /** Attempts the client could not send (no descriptor, no local port): held and sent again, never a server failure. */
  notSent: COUNT.optional(),
  /** How late the attempts went out against their planned instants, ms (0 on the simulator's clock). */
  lateness: PERCENTILES.nullable().optional(),
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
  /** The attempts' lateness, the same way. */
  latenessHistogram: z.string().nullable().optional(),
};

export const CLIENT_WINDOW_LINE = CLIENT_REPORT.extend({
  ...PLACEMENT,
  /** The event loop's delay in the window (the worst thread's), ms; null when not measured. */
  eventLoopDelayMs: PERCENTILES.nullable().optional(),
  /** The client itself fell behind in this window (src/model/client-behind.ts), and why: its figures are not the server's. */
  behind: z.boolean().optional(),
  behindReason: z.string().nullable().optional(),
  /** The run ended before the window's slot did. */
  partial: z.literal(true).optional(),
});

export const CLIENT_SUMMARY_LINE = CLIENT_REPORT.extend({
  ...PLACEMENT,
  summary: z.literal(true),
  /** What ended the run: "duration", "SIGINT", … */
  reason: z.string(),
  /** Windows in which the client fell behind: their figures are the client's, not the server's. */
  behindWindows: COUNT.optional(),
  behind: z.boolean().optional(),
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

/** One line of a client's -json output, checked; a LineError naming the file and line otherwise. */
export function parseClientLine(text: string, place: LinePlace): ClientLine {
  const json = parseJsonObject(text, place, WHAT);
  if (json.summary !== true) return { kind: "window", ...checkLine(CLIENT_WINDOW_LINE, json, place, WHAT) };
  if (json.started === false) return { kind: "not-started", ...checkLine(CLIENT_NOT_STARTED_LINE, json, place, WHAT) };
  return { kind: "summary", ...checkLine(CLIENT_SUMMARY_LINE, json, place, WHAT) };
}

/** A window's line as a point of the client's timeline, in ms from `startEpochMs`. */
export function clientWindow(line: ClientReport & Pick<ClientWindowLine, "behind" | "behindReason">, startEpochMs: number): ClientWindow {
  return {
    startMs: line.epochMs - line.windowMs - startEpochMs,
    endMs: line.epochMs - startEpochMs,
    okPerSec: line.okPerSec,
    errorsPerSec: line.errorsPerSec,
    timedoutPerSec: line.timedoutPerSec,
    attemptsPerSec: line.attemptsPerSec,
    retriesPerSec: line.retriesPerSec,
    ...(line.behind === true ? { behind: line.behindReason ?? "the client fell behind" } : {}),
  };
}

/** The client's windows from its -json output (`lines` as in the file, numbered from 1); summaries left out. */
export function readClientWindows(lines: readonly string[], startEpochMs: number, file: string): ClientWindow[] {
  return jsonLines(lines).flatMap(({ text, line }) => {
    const parsed = parseClientLine(text, { file, line });
    return parsed.kind === "window" ? [clientWindow(parsed, startEpochMs)] : [];
  });
}

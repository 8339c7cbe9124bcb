import { z } from "zod";
import type { ErrorKind } from "../model/outcome.ts";
import type { ClientWindow } from "../model/timeline.ts";
import { checkLine, jsonLines, type LinePlace, parseJsonObject } from "./json-line.ts";
import { shardProblem } from "./shard-label.ts";

/*
 * The client's -json lines: one per window, then one summary (or, stopped before it
 * started, a summary saying so). The simulator prints the window's report fields with
 * "source": "client". Their types and the one reader are here; the writers are in
 * client-line-writer.ts, so that the programs that only write lines never load the
 * validator (zod's many files at start-up would not fit a process short of descriptors).
 * A new field is one entry in CLIENT_REPORT (optional if older lines lack it) and one in
 * clientReport().
 */

/**
 * Times and lengths within Date's range (8.64e15 ms, 273,790 years), instants from 1 ms after
 * 1970: whatever a reader subtracts, adds or turns into a date stays a valid date, and a count
 * over the distance between two instants stays a finite rate (two instants from 1 ms on are
 * 0 or at least 2^-52 ms apart).
 */
const MAX_MS = 8.64e15;
const EPOCH_MS = z.number().min(1).max(MAX_MS);
const WINDOW_MS = z.number().min(0).max(MAX_MS);
/** Text that readers print: a control character in it would print lines the client never wrote. */
const PRINTED_TEXT = z.string().regex(/^[^\p{Cc}\p{Cs}]*$/u, "must be printable text, without control characters");
const COUNT = z.number().int().nonnegative();
const RATE = z.number().nonnegative();
const DELAY_MS = z.number().min(0).max(MAX_MS);
const PERCENTILES = z.object({ p50: DELAY_MS, p99: DELAY_MS, max: DELAY_MS });

/** Every ErrorKind, which the error counts are keyed by (a key such as "constructor" is no kind, and no count adds to it). */
const ERROR_KINDS = [
  "refused",
  "reset",
  "closed",
  "no-local-port",
  "no-file-descriptor",
  "unreachable",
  "dns",
  "http-4xx",
  "http-5xx",
  "http-other",
  "body-too-large",
  "other",
] as const satisfies readonly ErrorKind[];
// Compiles only while the list names every ErrorKind.
const EVERY_ERROR_KIND: Exclude<ErrorKind, (typeof ERROR_KINDS)[number]> extends never ? true : never = true;
void EVERY_ERROR_KIND;

/** The fields every window and summary carries: counters, rates, error kinds and OK latencies. */
const CLIENT_REPORT = z.object({
  time: z.string(),
  /** The end of the window (epoch ms), and its length. */
  epochMs: EPOCH_MS,
  windowMs: WINDOW_MS,
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
  errorKinds: z.partialRecord(z.enum(ERROR_KINDS), COUNT),
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
  gridEpochMs: EPOCH_MS.optional(),
  /** `i/n` when the herd is sharded, as -shard reads it. */
  shard: z
    .string()
    .check((context) => {
      const problem = shardProblem(context.value);
      if (problem !== undefined)
        context.issues.push({ code: "custom", message: `${JSON.stringify(context.value)}: ${problem}`, input: context.value });
    })
    .optional(),
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
  behindReason: PRINTED_TEXT.nullable().optional(),
  /** The run ended before the window's slot did. */
  partial: z.literal(true).optional(),
});

export const CLIENT_SUMMARY_LINE = CLIENT_REPORT.extend({
  ...PLACEMENT,
  summary: z.literal(true),
  /** What ended the run: "duration", "SIGINT", … */
  reason: PRINTED_TEXT,
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

/**
 * The same windows placed on their slots of the client's window grid (`gridEpochMs`), as the
 * simulator's windows are: each ends at its grid point and starts where the one before it ended
 * (the first where it began). A window closes a few ms after its grid point; read as it closed,
 * the window before a stop anchored on the grid would end just after the stop and leave the
 * baseline. A line without a grid point, and a last window cut short by the client's stop (which
 * names the slot it stopped in), are read as they closed.
 */
export function readClientWindowsOnGrid(lines: readonly string[], startEpochMs: number, file: string): ClientWindow[] {
  const windows: ClientWindow[] = [];
  for (const { text, line } of jsonLines(lines)) {
    const parsed = parseClientLine(text, { file, line });
    if (parsed.kind !== "window") continue;
    const closed = clientWindow(parsed, startEpochMs);
    const previous = windows.at(-1);
    // A last window cut short by the client's stop names the slot it stopped in: it ends where it closed.
    const endMs = parsed.gridEpochMs === undefined || parsed.partial === true ? closed.endMs : parsed.gridEpochMs - startEpochMs;
    windows.push({ ...closed, startMs: previous?.endMs ?? closed.startMs, endMs });
  }
  return windows;
}

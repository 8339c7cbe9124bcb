import type { LatencySummary } from "../model/latency-histogram.ts";
import type { Counts } from "../model/window-stats.ts";
import { type ClientSummaryLine, type ClientWindowLine, parseClientLine } from "../contracts/client-line.ts";
import { ContractError, eachJsonLine, LineError, type LinePlace } from "../contracts/json-line.ts";

/** One window or summary of a client's -json output, as merging needs it. */
export interface LoggedWindow {
  /** Where it came from, for messages: file and line. */
  readonly source: string;
  /** End of the window (epoch ms) and its length. */
  readonly epochMs: number;
  readonly windowMs: number;
  /** The end of its slot on the window grid; undefined in output from before grids were recorded. */
  readonly gridEpochMs: number | undefined;
  readonly counts: Counts;
  readonly inFlight: number;
  /**
   * OK latencies as the line carries them (HdrHistogram, compressed, base64), decoded only
   * when merged: a decoded histogram takes about 200 kB, a window's encoding about 100 bytes.
   */
  readonly histogram: string | undefined;
  /** The exact longest OK latency (latencyMs.max), which the histogram knows only to its bucket's width. */
  readonly maxLatencyMs: number | undefined;
  /** How late the client sent its attempts (the -json `lateness` and `latenessHistogram`); undefined from older clients. */
  readonly latenessHistogram: string | undefined;
  readonly maxLatenessMs: number | undefined;
  /** The client's event-loop delay (its worst thread's); undefined from older clients. */
  readonly eventLoopDelay: LatencySummary | undefined;
  /** Why the client (this shard) fell behind in this window; undefined when it kept up. */
  readonly behind: string | undefined;
  /** OK answers were counted but the line carries no histogram to merge. */
  readonly missingHistogram: boolean;
  readonly partial: boolean;
  readonly shard: string | undefined;
}

export interface LoggedSummary extends LoggedWindow {
  readonly reason: string;
}

/** What one client's output holds. */
export interface ClientLog {
  readonly name: string;
  readonly windows: LoggedWindow[];
  readonly summary: LoggedSummary | undefined;
}

const WHAT = "a client's -json output";

/**
 * Reads a client's -json output (a file, a pod's log), line by line. Lines that are not JSON
 * objects (the start-up line on stderr, which `kubectl logs` interleaves) are skipped; a JSON
 * line that is not a client's line is an error naming the file and line, and so is a file
 * with no client line at all, whatever files it is merged with.
 */
export function parseClientLog(name: string, text: string | Iterable<string>): ClientLog {
  const windows: LoggedWindow[] = [];
  let summary: LoggedSummary | undefined;
  let clientLines = 0;
  let shard: { readonly label: string | undefined; readonly line: number } | undefined;
  for (const { text: line, line: number } of eachJsonLine(typeof text === "string" ? text.split("\n") : text)) {
    const place = { file: name, line: number };
    const parsed = parseClientLine(line, place);
    clientLines++;
    if (parsed.kind === "not-started") continue; // stopped before it started
    shard ??= { label: parsed.shard, line: number };
    if (parsed.shard !== shard.label) {
      throw new LineError(
        place,
        `shard ${String(parsed.shard)} where line ${shard.line} says ${String(shard.label)}: one client has one shard`,
      );
    }
    const window = loggedWindow(place, parsed);
    if (parsed.kind === "summary") {
      if (summary !== undefined) throw new LineError(place, "a second summary in one client's output");
      summary = { ...window, reason: parsed.reason };
    } else {
      if (summary !== undefined) throw new LineError(place, "a window after the summary");
      windows.push(window);
    }
  }
  if (clientLines === 0) throw new ContractError(`${name}: no JSON line (is this ${WHAT}?)`);
  return { name, windows, summary };
}

function loggedWindow(place: LinePlace, line: ClientWindowLine | ClientSummaryLine): LoggedWindow {
  const counts: Counts = {
    ok: line.ok,
    errors: line.errors,
    timedout: line.timedout,
    gaveUp: line.gaveUp,
    attempts: line.attempts,
    retries: line.retries,
    throttled: line.throttled,
    rejected: line.rejected,
    // Attempts the client could not send; absent from older clients.
    notSent: line.notSent ?? 0,
    errorKinds: { ...(line.errorKinds as Counts["errorKinds"]) },
  };
  const histogram = line.latencyHistogram ?? undefined;
  const loop = "eventLoopDelayMs" in line ? line.eventLoopDelayMs : undefined;
  const behind = "behindReason" in line && line.behind === true ? (line.behindReason ?? "the client fell behind") : undefined;
  return {
    source: `${place.file}:${place.line}`,
    epochMs: line.epochMs,
    windowMs: line.windowMs,
    gridEpochMs: line.gridEpochMs,
    counts,
    inFlight: line.inFlight,
    histogram,
    maxLatencyMs: line.latencyMs?.max,
    latenessHistogram: line.latenessHistogram ?? undefined,
    maxLatenessMs: line.lateness?.max,
    eventLoopDelay: loop == null ? undefined : { p50Ms: loop.p50, p99Ms: loop.p99, maxMs: loop.max },
    behind,
    missingHistogram: histogram === undefined && counts.ok > 0,
    partial: "partial" in line && line.partial === true,
    shard: line.shard,
  };
}

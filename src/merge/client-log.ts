import { decodeLatencyHistogram, type LatencyHistogram, type LatencySummary } from "../model/latency-histogram.ts";
import { type Counts, emptyCounts } from "../model/window-stats.ts";

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
  readonly histogram: LatencyHistogram | undefined;
  /** The exact longest OK latency (latencyMs.max), which the histogram knows only to its bucket's width. */
  readonly maxLatencyMs: number | undefined;
  /** How late the client sent its attempts (the -json `lateness` and `latenessHistogram`); undefined from older clients. */
  readonly latenessHistogram: LatencyHistogram | undefined;
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

type Json = Record<string, unknown>;

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const COUNT_FIELDS = ["ok", "errors", "timedout", "gaveUp", "attempts", "retries"] as const;

/**
 * Reads a client's -json output (a file, a pod's log). Lines that are not JSON objects
 * (the start-up line on stderr, which `kubectl logs` interleaves) are skipped; a JSON line
 * that is not a client window is an error naming the line.
 */
export function parseClientLog(name: string, text: string): ClientLog {
  const windows: LoggedWindow[] = [];
  let summary: LoggedSummary | undefined;
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    const source = `${name}:${index + 1}`;
    let json: Json;
    try {
      json = JSON.parse(line) as Json;
    } catch {
      throw new Error(`${source}: not valid JSON`);
    }
    if (json.summary === true && json.started === false) continue; // stopped before it started
    const window = readWindow(source, json);
    if (json.summary === true) {
      if (summary !== undefined) throw new Error(`${source}: a second summary in one client's output`);
      summary = { ...window, reason: typeof json.reason === "string" ? json.reason : "unknown" };
    } else {
      if (summary !== undefined) throw new Error(`${source}: a window after the summary`);
      windows.push(window);
    }
  }
  return { name, windows, summary };
}

function readWindow(source: string, json: Json): LoggedWindow {
  const fail = (what: string) => new Error(`${source}: ${what} (is this a client's -json output?)`);
  if (!isNumber(json.epochMs) || !isNumber(json.windowMs)) throw fail("no epochMs and windowMs");
  const counts = emptyCounts();
  for (const field of COUNT_FIELDS) {
    const value = json[field];
    if (!isNumber(value) || !Number.isInteger(value) || value < 0) throw fail(`no count "${field}"`);
    counts[field] = value;
  }
  // Attempts the client refused itself (-throttle, -breaker) or could not send; absent from older clients.
  for (const field of ["throttled", "rejected", "notSent"] as const) {
    const value = json[field] ?? 0;
    if (!isNumber(value) || !Number.isInteger(value) || value < 0) throw fail(`a bad count "${field}"`);
    counts[field] = value;
  }
  if (typeof json.errorKinds === "object" && json.errorKinds !== null) {
    for (const [kind, count] of Object.entries(json.errorKinds as Json)) {
      if (!isNumber(count)) throw fail(`a bad error kind count "${kind}"`);
      counts.errorKinds[kind as keyof Counts["errorKinds"]] = count;
    }
  }
  const decode = (field: "latencyHistogram" | "latenessHistogram"): LatencyHistogram | undefined => {
    const encoded = json[field];
    if (typeof encoded !== "string") return undefined;
    try {
      return decodeLatencyHistogram(encoded);
    } catch {
      throw fail(`a ${field} that does not decode`);
    }
  };
  const histogram = decode("latencyHistogram");
  return {
    source,
    epochMs: json.epochMs,
    windowMs: json.windowMs,
    gridEpochMs: isNumber(json.gridEpochMs) ? json.gridEpochMs : undefined,
    counts,
    inFlight: isNumber(json.inFlight) ? json.inFlight : 0,
    histogram,
    maxLatencyMs: readMax(json.latencyMs),
    latenessHistogram: decode("latenessHistogram"),
    maxLatenessMs: readMax(json.lateness),
    eventLoopDelay: readSummary(json.eventLoopDelayMs),
    behind: json.behind === true ? (typeof json.behindReason === "string" ? json.behindReason : "the client fell behind") : undefined,
    missingHistogram: histogram === undefined && counts.ok > 0,
    partial: json.partial === true,
    shard: typeof json.shard === "string" ? json.shard : undefined,
  };
}

function readSummary(summary: unknown): LatencySummary | undefined {
  if (typeof summary !== "object" || summary === null) return undefined;
  const { p50, p99, max } = summary as Json;
  return isNumber(p50) && isNumber(p99) && isNumber(max) ? { p50Ms: p50, p99Ms: p99, maxMs: max } : undefined;
}

function readMax(latency: unknown): number | undefined {
  if (typeof latency !== "object" || latency === null) return undefined;
  const max = (latency as Json).max;
  return isNumber(max) ? max : undefined;
}

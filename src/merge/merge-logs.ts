import { ContractError } from "../contracts/json-line.ts";
import { parseShard } from "../contracts/shard-label.ts";
import { addCounts } from "../model/window-merge.ts";
import type { WindowReport } from "../model/window-stats.ts";
import { worstDelay } from "../model/client-behind.ts";
import {
  decodeLatencyHistogram,
  encodeLatencyHistogram,
  type LatencyHistogram,
  type LatencySummary,
  newLatencyHistogram,
  summarizeLatency,
} from "../model/latency-histogram.ts";
import type { ClientLog, LoggedWindow } from "./client-log.ts";

/** One window of the merged timeline, or the merged summary. */
export interface MergedWindow {
  /** Over [epochMs - windowMs, epochMs], epoch ms; its histograms are in `encoded`, not decoded. */
  readonly report: WindowReport;
  /** The merged OK latencies and lateness, encoded as the client's lines carry them; undefined when none. */
  readonly encoded: { readonly latencyHistogram: string | undefined; readonly latenessHistogram: string | undefined };
  readonly inFlight: number;
  readonly epochMs: number;
  readonly gridEpochMs: number | undefined;
  readonly partial: boolean;
  /** How many inputs had this window. */
  readonly parts: number;
  /** The worst event-loop delay of the parts. */
  readonly eventLoopDelay: LatencySummary | undefined;
  /** Why some shard fell behind in this window (each shard that did, by name); undefined when all kept up. */
  readonly behind: string | undefined;
}

export interface MergedRun {
  readonly windows: MergedWindow[];
  readonly summary: (MergedWindow & { readonly reason: string }) | undefined;
  /** What the reader should know about the inputs (missing shards, unaligned windows…), one line each. */
  readonly notes: string[];
}

/** The smallest and the largest of `values`, in one loop (a spread into Math.min overflows the stack past ~10^5). */
export function range(values: Iterable<number>): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  return { min, max };
}

type HistogramField = "histogram" | "latenessHistogram";
const FIELD_NAMES: Record<HistogramField, string> = { histogram: "latencyHistogram", latenessHistogram: "latenessHistogram" };

/**
 * The parts' histograms of one field added, each decoded only while it is added (a decoded
 * histogram takes about 200 kB), with the percentiles read from the sum and the exact
 * maximum of the parts; the sum encoded again for the output.
 */
function addEncoded(
  parts: readonly LoggedWindow[],
  field: HistogramField,
): { summary: LatencySummary | undefined; encoded: string | undefined } {
  let sum: LatencyHistogram | undefined;
  let exactMaxMs: number | undefined = 0;
  for (const part of parts) {
    const encoded = part[field];
    if (encoded === undefined) continue;
    let histogram: LatencyHistogram;
    try {
      histogram = decodeLatencyHistogram(encoded);
    } catch {
      throw new ContractError(`${part.source}: a ${FIELD_NAMES[field]} that does not decode (is this a client's -json output?)`);
    }
    if (histogram.totalCount === 0) continue;
    sum ??= newLatencyHistogram();
    sum.add(histogram);
    const maxMs = field === "histogram" ? part.maxLatencyMs : part.maxLatenessMs;
    exactMaxMs = exactMaxMs === undefined || maxMs === undefined ? undefined : Math.max(exactMaxMs, maxMs);
  }
  if (sum === undefined) return { summary: undefined, encoded: undefined };
  return { summary: summarizeLatency(sum, exactMaxMs), encoded: encodeLatencyHistogram(sum) };
}

/**
 * Windows of several herds as one: counts add up, HdrHistograms are added and percentiles
 * read from the sum, in-flight attempts add up; the window lasts as long as its longest
 * part (a shard that joined late has a shorter first window).
 */
function mergeWindows(parts: readonly LoggedWindow[]): MergedWindow {
  const epochMs = range(parts.map((part) => part.epochMs)).max;
  const windowMs = range(parts.map((part) => part.windowMs)).max;
  const latency = addEncoded(parts, "histogram");
  const lateness = addEncoded(parts, "latenessHistogram");
  return {
    report: {
      startMs: epochMs - windowMs,
      endMs: epochMs,
      counts: addCounts(parts.map((part) => part.counts)),
      latency: latency.summary,
      histogram: undefined,
      lateness: lateness.summary,
      latenessHistogram: undefined,
    },
    encoded: { latencyHistogram: latency.encoded, latenessHistogram: lateness.encoded },
    inFlight: parts.reduce((sum, part) => sum + part.inFlight, 0),
    epochMs,
    gridEpochMs: parts[0]!.gridEpochMs,
    partial: parts.some((part) => part.partial),
    parts: parts.length,
    eventLoopDelay: worstDelay(parts.map((part) => part.eventLoopDelay)),
    behind: behindParts(parts),
  };
}

/** A merged window is not evidence when any of its parts was not: each behind part, named, with its reason. */
function behindParts(parts: readonly LoggedWindow[]): string | undefined {
  const behind = parts.filter((part) => part.behind !== undefined);
  if (behind.length === 0) return undefined;
  return behind.map((part) => `${part.shard === undefined ? part.source : `shard ${part.shard}`}: ${part.behind}`).join(" | ");
}

/**
 * Whether the inputs' windows share one grid (the clients ran with the same -start-at, or
 * there is one input): every window has a grid point, and every input with whole windows
 * shares at least one grid point with the first such input.
 */
function aligned(logs: readonly ClientLog[]): boolean {
  if (logs.some((log) => log.windows.some((window) => window.gridEpochMs === undefined))) return false;
  const gridsOf = (log: ClientLog) => new Set(log.windows.filter((window) => !window.partial).map((window) => window.gridEpochMs));
  const withWindows = logs.map(gridsOf).filter((grid) => grid.size > 0);
  const first = withWindows[0];
  return first === undefined || withWindows.every((grid) => [...grid].some((point) => first.has(point)));
}

/** At most this many missing shards are named; the rest are counted. */
const NAMED_MISSING = 10;

/**
 * The indices in [0, count) that `seen` lacks: the first NAMED_MISSING of them, and how many
 * there are, found in the gaps between the seen ones, never by a list of all `count`.
 */
function missingShards(seen: ReadonlySet<number>, count: number): { first: number[]; total: number } {
  const first: number[] = [];
  let from = 0;
  for (const index of [...seen, count].sort((a, b) => a - b)) {
    for (let missing = from; missing < index && first.length < NAMED_MISSING; missing++) first.push(missing);
    from = index + 1;
  }
  return { first, total: count - seen.size };
}

/**
 * What the shard labels say about the inputs; a ContractError for shards of different splits
 * and for a shard given twice, naming the files.
 */
function shardNotes(logs: readonly ClientLog[]): string[] {
  const labels = logs.map((log) => ({ log, label: log.summary?.shard ?? log.windows[0]?.shard }));
  const sharded = labels.filter((entry) => entry.label !== undefined);
  if (sharded.length === 0) return [];
  const parsed = sharded.map(({ log, label }) => ({ log, label: label!, ...parseShard(label!) }));
  const counts = new Set(parsed.map((entry) => entry.count));
  if (counts.size > 1)
    throw new ContractError(
      `the inputs are shards of different splits: ${parsed.map((entry) => `${entry.log.name} ${entry.label}`).join(", ")}`,
    );
  const seen = new Map<number, string>();
  for (const entry of parsed) {
    const other = seen.get(entry.index);
    if (other !== undefined) throw new ContractError(`shard ${entry.label} appears twice: ${other} and ${entry.log.name}`);
    seen.set(entry.index, entry.log.name);
  }
  const count = parsed[0]!.count;
  const missing = missingShards(new Set(seen.keys()), count);
  const notes: string[] = [];
  if (sharded.length < logs.length) notes.push(`${logs.length - sharded.length} input(s) carry no shard label; merged all the same`);
  if (missing.total > 0) {
    const more = missing.total > missing.first.length ? ` and ${missing.total - missing.first.length} more` : "";
    notes.push(
      `shards missing: ${missing.first.map((index) => `${index}/${count}`).join(", ")}${more} (the totals cover ${seen.size} of ${count} shards)`,
    );
  }
  return notes;
}

/** Combines clients' -json outputs (shards of one herd) into one timeline and one summary. */
export function mergeClientLogs(logs: readonly ClientLog[]): MergedRun {
  const notes = shardNotes(logs);
  const groups = new Map<number, LoggedWindow[]>();
  const add = (key: number, window: LoggedWindow) => {
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [window]);
    else group.push(window);
  };
  if (aligned(logs)) {
    for (const log of logs) for (const window of log.windows) add(window.gridEpochMs!, window);
  } else {
    notes.push("the inputs' windows do not share a grid (start the clients with the same -start-at): windows merged by position");
    for (const log of logs) for (const [index, window] of log.windows.entries()) add(index, window);
  }
  const windows = [...groups.values()].map(mergeWindows).sort((a, b) => (a.gridEpochMs ?? a.epochMs) - (b.gridEpochMs ?? b.epochMs));
  const without = logs.flatMap((log) => log.windows).filter((window) => window.missingHistogram).length;
  if (without > 0)
    notes.push(`${without} window(s) with OK answers carry no latency histogram; their latencies are left out of the percentiles`);

  const summaries: (LoggedWindow & { reason: string })[] = [];
  for (const log of logs) {
    if (log.summary !== undefined) {
      summaries.push(log.summary);
    } else if (log.windows.length > 0) {
      // A client that was killed prints no summary: its windows stand in for it.
      notes.push(`${log.name} has no summary (the client did not finish): its windows stand in for it`);
      const sum = mergeWindows(log.windows);
      const firstStartMs = -range(log.windows.map((window) => window.windowMs - window.epochMs)).max;
      summaries.push({
        source: log.name,
        epochMs: sum.epochMs,
        windowMs: sum.epochMs - firstStartMs,
        gridEpochMs: undefined,
        counts: sum.report.counts,
        inFlight: 0,
        histogram: sum.encoded.latencyHistogram,
        maxLatencyMs: sum.report.latency?.maxMs,
        latenessHistogram: sum.encoded.latenessHistogram,
        maxLatenessMs: sum.report.lateness?.maxMs,
        eventLoopDelay: worstDelay(log.windows.map((window) => window.eventLoopDelay)),
        behind: log.windows.find((window) => window.behind !== undefined)?.behind,
        missingHistogram: false,
        partial: false,
        shard: undefined,
        reason: "none",
      });
    }
  }
  const reasons = [...new Set(summaries.map((summary) => summary.reason))];
  const summary = summaries.length === 0 ? undefined : { ...mergeWindows(summaries), reason: reasons.join(",") };
  return { windows, summary, notes };
}

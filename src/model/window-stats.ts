import * as hdr from "hdr-histogram-js";
import type { HerdObserver } from "./herd.ts";
import type { AttemptResult, ErrorKind, LocalRefusal } from "./outcome.ts";

/** Latencies are recorded in microseconds, from 1 µs to an hour, to 3 significant digits. */
const HISTOGRAM_MAX_US = 3_600_000_000;

export interface Counts {
  ok: number;
  errors: number;
  timedout: number;
  gaveUp: number;
  attempts: number;
  retries: number;
  /** Attempts refused by the client itself: by an adaptive throttle, and by an open circuit breaker. */
  throttled: number;
  rejected: number;
  errorKinds: Partial<Record<ErrorKind, number>>;
}

/**
 * Percentiles come from the histogram, whose buckets hold values to 3 significant digits
 * and answer with a bucket's upper end; the maximum is the exact largest latency, tracked
 * beside it. Percentiles are clamped to it, so p50 <= p99 <= max always holds.
 */
export interface LatencySummary {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** One closed window: counts over [startMs, endMs) on the herd's clock. */
export interface WindowReport {
  readonly startMs: number;
  readonly endMs: number;
  readonly counts: Counts;
  /** Of the OK responses that ended in the window; undefined when there were none. */
  readonly latency: LatencySummary | undefined;
}

export function emptyCounts(): Counts {
  return { ok: 0, errors: 0, timedout: 0, gaveUp: 0, attempts: 0, retries: 0, throttled: 0, rejected: 0, errorKinds: {} };
}

/** Per second over the window's real length (a window closed late is not over-counted). */
export function perSecond(count: number, report: { startMs: number; endMs: number }): number {
  const seconds = (report.endMs - report.startMs) / 1000;
  return seconds > 0 ? count / seconds : 0;
}

/**
 * Counters for the current window and for the whole run. Every attempt lands in exactly one
 * window: closing a window swaps in fresh counters, so none is lost or counted twice.
 */
export class WindowStats implements HerdObserver {
  private window = emptyCounts();
  private readonly total = emptyCounts();
  private windowStartMs: number;
  private readonly runStartMs: number;
  private readonly windowLatency = newHistogram();
  private readonly totalLatency = newHistogram();
  /**
   * Latencies are recorded into the window's histogram only (closing a window adds it to
   * the total), and a run of equal latencies as one value and a count: a server below its
   * limit answers in exactly its base delay, and recording costs more than the rest of an
   * attempt in the simulator. The histograms end up the same.
   */
  private pendingMicros = 0;
  private pendingCount = 0;
  /** The exact largest OK latency of the open window and of the run, in ms. */
  private windowMaxMs = -Infinity;
  private totalMaxMs = -Infinity;

  constructor(startMs: number) {
    this.windowStartMs = startMs;
    this.runStartMs = startMs;
  }

  attemptStarted(isRetry: boolean): void {
    this.window.attempts++;
    this.total.attempts++;
    if (isRetry) {
      this.window.retries++;
      this.total.retries++;
    }
  }

  attemptEnded(result: AttemptResult, latencyMs: number): void {
    countResult(this.window, result);
    countResult(this.total, result);
    if (result.outcome === "ok") {
      if (latencyMs > this.windowMaxMs) this.windowMaxMs = latencyMs;
      const micros = Math.min(HISTOGRAM_MAX_US, Math.max(1, Math.round(latencyMs * 1000)));
      if (micros === this.pendingMicros) {
        this.pendingCount++;
      } else {
        this.flushLatency();
        this.pendingMicros = micros;
        this.pendingCount = 1;
      }
    }
  }

  gaveUp(): void {
    this.window.gaveUp++;
    this.total.gaveUp++;
  }

  attemptRefused(refusal: LocalRefusal): void {
    this.window[refusal]++;
    this.total[refusal]++;
  }

  /** Closes the current window at `nowMs` and starts the next one there. */
  closeWindow(nowMs: number): WindowReport {
    this.flushLatency();
    const report: WindowReport = {
      startMs: this.windowStartMs,
      endMs: nowMs,
      counts: this.window,
      latency: summarize(this.windowLatency, this.windowMaxMs),
    };
    this.window = emptyCounts();
    if (this.windowMaxMs > this.totalMaxMs) this.totalMaxMs = this.windowMaxMs;
    this.windowMaxMs = -Infinity;
    this.totalLatency.add(this.windowLatency);
    this.windowLatency.reset();
    this.windowStartMs = nowMs;
    return report;
  }

  /** Totals of the whole run up to `nowMs` (the open window included). */
  totals(nowMs: number): WindowReport {
    this.flushLatency();
    return {
      startMs: this.runStartMs,
      endMs: nowMs,
      counts: structuredClone(this.total),
      latency: summarize(this.totalLatencyNow(), Math.max(this.totalMaxMs, this.windowMaxMs)),
    };
  }

  private flushLatency(): void {
    if (this.pendingCount > 0) this.windowLatency.recordValueWithCount(this.pendingMicros, this.pendingCount);
    this.pendingCount = 0;
  }

  /** The closed windows' latencies and the open window's. */
  private totalLatencyNow(): hdr.Histogram {
    if (this.windowLatency.totalCount === 0) return this.totalLatency;
    const merged = newHistogram();
    merged.add(this.totalLatency);
    merged.add(this.windowLatency);
    return merged;
  }
}

function countResult(counts: Counts, result: AttemptResult): void {
  if (result.outcome === "ok") counts.ok++;
  else if (result.outcome === "timedout") counts.timedout++;
  else {
    counts.errors++;
    const kind = result.errorKind ?? "other";
    counts.errorKinds[kind] = (counts.errorKinds[kind] ?? 0) + 1;
  }
}

function newHistogram(): hdr.Histogram {
  return hdr.build({
    bitBucketSize: 64,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HISTOGRAM_MAX_US,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

/** Percentiles from the histogram, clamped to the exact maximum `maxMs`. */
function summarize(histogram: hdr.Histogram, maxMs: number): LatencySummary | undefined {
  if (histogram.totalCount === 0) return undefined;
  return {
    p50Ms: Math.min(histogram.getValueAtPercentile(50) / 1000, maxMs),
    p99Ms: Math.min(histogram.getValueAtPercentile(99) / 1000, maxMs),
    maxMs,
  };
}

/**
 * When the next window should close: windows end on a fixed grid from the start, so timer
 * lateness never accumulates; a window that closed late (a stopped process) is followed
 * by the next grid point still ahead.
 */
export function nextWindowEnd(runStartMs: number, intervalMs: number, nowMs: number): number {
  const elapsedWindows = Math.floor((nowMs - runStartMs) / intervalMs);
  return runStartMs + (elapsedWindows + 1) * intervalMs;
}

import type { HerdObserver } from "./attempt.ts";
import {
  HISTOGRAM_MAX_US,
  type LatencyHistogram,
  type LatencySummary,
  newLatencyHistogram,
  summarizeLatency,
} from "./latency-histogram.ts";
import type { AttemptResult, ErrorKind, LocalRefusal } from "./outcome.ts";

export type { LatencySummary } from "./latency-histogram.ts";

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

/** One closed window: counts over [startMs, endMs) on the herd's clock. */
export interface WindowReport {
  readonly startMs: number;
  readonly endMs: number;
  readonly counts: Counts;
  /** Of the OK responses that ended in the window; undefined when there were none. */
  readonly latency: LatencySummary | undefined;
  /** The same OK latencies in full (µs), for merging with other herds' windows; undefined when none. */
  readonly histogram: LatencyHistogram | undefined;
}

export function emptyCounts(): Counts {
  return { ok: 0, errors: 0, timedout: 0, gaveUp: 0, attempts: 0, retries: 0, throttled: 0, rejected: 0, errorKinds: {} };
}

/** Per second over the window's real length (a window closed late is not over-counted). */
export function perSecond(count: number, report: { startMs: number; endMs: number }): number {
  const seconds = (report.endMs - report.startMs) / 1000;
  return seconds > 0 ? count / seconds : 0;
}

/** Retries among the attempts sent, as a fraction; 0 when none was sent. */
export function retryShare(counts: { attempts: number; retries: number }): number {
  return counts.attempts > 0 ? counts.retries / counts.attempts : 0;
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
  private windowLatency = newLatencyHistogram();
  private readonly totalLatency = newLatencyHistogram();
  /**
   * Latencies are recorded into the window's histogram only (closing a window adds it to
   * the total), and a run of equal latencies as one value and a count: a server below its
   * limit answers in exactly its base delay, and recording costs more than the rest of an
   * attempt in the simulator. The histograms end up the same.
   */
  private pendingMicros = 0;
  private pendingCount = 0;
  /** The exact largest OK latency of the open window and of the run, in ms (the histogram knows it to a bucket). */
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
    const histogram = this.windowLatency.totalCount === 0 ? undefined : this.windowLatency;
    const report: WindowReport = {
      startMs: this.windowStartMs,
      endMs: nowMs,
      counts: this.window,
      latency: histogram === undefined ? undefined : summarizeLatency(histogram, this.windowMaxMs),
      histogram,
    };
    this.window = emptyCounts();
    if (this.windowMaxMs > this.totalMaxMs) this.totalMaxMs = this.windowMaxMs;
    this.windowMaxMs = -Infinity;
    if (histogram !== undefined) {
      // The report keeps this window's histogram; the next window gets a fresh one.
      this.totalLatency.add(histogram);
      this.windowLatency = newLatencyHistogram();
    }
    this.windowStartMs = nowMs;
    return report;
  }

  /** Totals of the whole run up to `nowMs` (the open window included). */
  totals(nowMs: number): WindowReport {
    this.flushLatency();
    const histogram = newLatencyHistogram();
    histogram.add(this.totalLatency);
    histogram.add(this.windowLatency);
    return {
      startMs: this.runStartMs,
      endMs: nowMs,
      counts: structuredClone(this.total),
      latency: summarizeLatency(histogram, Math.max(this.totalMaxMs, this.windowMaxMs)),
      histogram: histogram.totalCount === 0 ? undefined : histogram,
    };
  }

  private flushLatency(): void {
    if (this.pendingCount > 0) this.windowLatency.recordValueWithCount(this.pendingMicros, this.pendingCount);
    this.pendingCount = 0;
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

/**
 * When the next window should close: windows end on a fixed grid from the start, so timer
 * lateness never accumulates; a window that closed late (a stopped process) is followed
 * by the next grid point still ahead.
 */
export function nextWindowEnd(runStartMs: number, intervalMs: number, nowMs: number): number {
  const elapsedWindows = Math.floor((nowMs - runStartMs) / intervalMs);
  return runStartMs + (elapsedWindows + 1) * intervalMs;
}

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
  /**
   * Attempts the client could not send at all (no file descriptor, no local port): the
   * client's own limit, not the server's failure. Not in `attempts`, `errors` or `timedout`;
   * the user sends again shortly, and the wait counts as lateness.
   */
  notSent: number;
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
  /**
   * How late the client sent its attempts in the window: actual send instant minus planned
   * (the instant its timer was due). 0 on a virtual clock; on a real one, a client that cannot
   * keep up sends late, and the server is judged on load it was never offered. Undefined when
   * no attempt was sent.
   */
  readonly lateness: LatencySummary | undefined;
  /** The same lateness in full (µs), for merging; undefined when none. */
  readonly latenessHistogram: LatencyHistogram | undefined;
}

export function emptyCounts(): Counts {
  return { ok: 0, errors: 0, timedout: 0, gaveUp: 0, attempts: 0, retries: 0, throttled: 0, rejected: 0, notSent: 0, errorKinds: {} };
}

/**
 * A histogram of one window (µs) with its exact maximum (ms), recording a run of equal values
 * as one value and a count: a server below its limit answers in exactly its base delay, and
 * a virtual clock is never late, and recording costs more than the rest of an attempt in the
 * simulator. The histogram ends up the same.
 */
class WindowRecorder {
  histogram = newLatencyHistogram();
  /** The smallest value recorded, µs: a latency is at least 1 µs, a lateness may be 0. */
  private readonly floorMicros: number;
  /**
   * The run's recorder, which each value is recorded into as well: adding a closed window's
   * histogram to it walked every bucket of an hour's range (some 65 000) once a window, the
   * costliest step of a simulated attempt in choose's runs (measured: a fifth of a worker's time).
   */
  private readonly total: WindowRecorder | undefined;
  maxMs = -Infinity;
  private pendingMicros = -1;
  private pendingCount = 0;

  /** Whether the reports keep each window's histogram; when not, the one histogram is emptied and used again. */
  private readonly keepsWindows: boolean;

  constructor(floorMicros: number, total?: WindowRecorder, keepsWindows = true) {
    this.floorMicros = floorMicros;
    this.total = total;
    this.keepsWindows = keepsWindows;
  }

  record(ms: number): void {
    if (ms > this.maxMs) this.maxMs = ms;
    const micros = Math.min(HISTOGRAM_MAX_US, Math.max(this.floorMicros, Math.round(ms * 1000)));
    if (micros === this.pendingMicros) {
      this.pendingCount++;
    } else {
      this.flush();
      this.pendingMicros = micros;
      this.pendingCount = 1;
    }
  }

  flush(): void {
    if (this.pendingCount > 0) {
      this.histogram.recordValueWithCount(this.pendingMicros, this.pendingCount);
      this.total?.histogram.recordValueWithCount(this.pendingMicros, this.pendingCount);
    }
    this.pendingCount = 0;
  }

  /** The window's histogram (undefined when empty) and summary; the recorder starts afresh (its values are in its total already). */
  close(): { histogram: LatencyHistogram | undefined; summary: LatencySummary | undefined } {
    this.flush();
    const histogram = this.histogram.totalCount === 0 ? undefined : this.histogram;
    const summary = histogram === undefined ? undefined : summarizeLatency(histogram, this.maxMs);
    if (this.total !== undefined && this.maxMs > this.total.maxMs) this.total.maxMs = this.maxMs;
    this.maxMs = -Infinity;
    if (histogram === undefined) return { histogram, summary };
    // A report that keeps this window's histogram gets it, and the next window a fresh one (some 180 KB);
    // one that does not (choose's measure) has the same summary, and the histogram is used again.
    if (!this.keepsWindows) {
      this.histogram.reset();
      return { histogram: undefined, summary };
    }
    this.histogram = newLatencyHistogram();
    return { histogram, summary };
  }

  /** The run so far: `this` (every value recorded in any window, the open one's once it is flushed), as a copy. */
  sum(open: WindowRecorder): { histogram: LatencyHistogram | undefined; summary: LatencySummary | undefined } {
    open.flush();
    const histogram = newLatencyHistogram();
    histogram.add(this.histogram);
    if (histogram.totalCount === 0) return { histogram: undefined, summary: undefined };
    return { histogram, summary: summarizeLatency(histogram, Math.max(this.maxMs, open.maxMs)) };
  }
}

/** Per second over the window's real length (a window closed late is not over-counted). */
export function perSecond(count: number, report: { startMs: number; endMs: number }): number {
  const seconds = (report.endMs - report.startMs) / 1000;
  return seconds > 0 ? count / seconds : 0;
}

/**
 * Retries among the attempts sent, as a fraction; 0 when none was sent. At most 1: an attempt
 * that found no descriptor is taken back from the window open when the transport says so, which
 * may be the next one, so a window of retries alone can count more retries than attempts.
 */
export function retryShare(counts: { attempts: number; retries: number }): number {
  return counts.attempts > 0 ? Math.min(1, counts.retries / counts.attempts) : 0;
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
  /** OK latencies of the whole run (each value recorded into it as well) and of the open window. */
  private readonly totalLatency = new WindowRecorder(1);
  private readonly windowLatency: WindowRecorder;
  /** Lateness of the attempts sent, likewise. */
  private readonly totalLateness = new WindowRecorder(0);
  private readonly windowLateness: WindowRecorder;

  /** `keepsWindowHistograms`: whether each window's report carries its histograms (a shard's -json merges them). */
  constructor(startMs: number, keepsWindowHistograms = true) {
    this.windowStartMs = startMs;
    this.runStartMs = startMs;
    this.windowLatency = new WindowRecorder(1, this.totalLatency, keepsWindowHistograms);
    this.windowLateness = new WindowRecorder(0, this.totalLateness, keepsWindowHistograms);
  }

  /** `latenessMs`: how long after its planned instant the attempt went out (0 on a virtual clock). */
  attemptStarted(isRetry: boolean, latenessMs = 0): void {
    this.windowLateness.record(latenessMs);
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
    if (result.outcome === "ok") this.windowLatency.record(latencyMs);
  }

  /**
   * An attempt started (attemptStarted) found no descriptor or local port and never went out:
   * it is taken back from the attempts (of the open window: the transport says so at once)
   * and counted as not sent. Its lateness stays recorded; the next try records its own.
   */
  attemptNotSent(isRetry: boolean): void {
    for (const counts of [this.window, this.total]) {
      counts.attempts--;
      if (isRetry) counts.retries--;
      counts.notSent++;
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
    const latency = this.windowLatency.close();
    const lateness = this.windowLateness.close();
    const report: WindowReport = {
      startMs: this.windowStartMs,
      endMs: nowMs,
      counts: this.window,
      latency: latency.summary,
      histogram: latency.histogram,
      lateness: lateness.summary,
      latenessHistogram: lateness.histogram,
    };
    this.window = emptyCounts();
    this.windowStartMs = nowMs;
    return report;
  }

  /** Totals of the whole run up to `nowMs` (the open window included). */
  totals(nowMs: number): WindowReport {
    const latency = this.totalLatency.sum(this.windowLatency);
    const lateness = this.totalLateness.sum(this.windowLateness);
    return {
      startMs: this.runStartMs,
      endMs: nowMs,
      counts: structuredClone(this.total),
      latency: latency.summary,
      histogram: latency.histogram,
      lateness: lateness.summary,
      latenessHistogram: lateness.histogram,
    };
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

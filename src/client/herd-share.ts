import { streamRandom } from "../backoff/random.ts";
import { realClock } from "../clock/real-clock.ts";
import type { HerdObserver } from "../model/attempt.ts";
import type { Herd } from "../model/herd.ts";
import type { LatencyHistogram, LatencySummary } from "../model/latency-histogram.ts";
import { createLoad } from "../model/load.ts";
import { OpenLoop, type OpenLoopTotals, openLoopTotals } from "../model/open-loop.ts";
import { type Counts, type WindowReport, WindowStats } from "../model/window-stats.ts";
import { createHttpTransport } from "../runner/attempt.ts";
import { EventLoopDelay } from "./event-loop-delay.ts";
import type { ClientOptions } from "../options/client.ts";
import type { UserRange } from "./shard.ts";

/** What one share of the herd counted in a window (or over the whole run). */
export interface ShareWindow {
  readonly counts: Counts;
  readonly histogram: LatencyHistogram | undefined;
  /** The exact longest OK latency (a histogram knows it only to its bucket's width). */
  readonly maxLatencyMs: number | undefined;
  /** How late the attempts went out (µs histogram) and the exact maximum (ms). */
  readonly latenessHistogram: LatencyHistogram | undefined;
  readonly maxLatenessMs: number | undefined;
  /** This share's thread's event-loop delay in the window; undefined over the whole run. */
  readonly eventLoopDelay: LatencySummary | undefined;
  readonly inFlight: number;
  /** Open-loop arrivals only: requests alive now and arrivals dropped so far. */
  readonly openLoop?: OpenLoopTotals | undefined;
}

/** The last window and the run's totals of a share that has stopped. */
export interface ShareFinal {
  readonly window: ShareWindow;
  readonly totals: ShareWindow;
}

/**
 * A share of the client's users with its own connections and counters: run in this thread,
 * or in a worker thread behind the same interface. The main thread owns the window grid
 * and asks every share for its window at each grid point, so every attempt lands in
 * exactly one window and none is lost or counted twice.
 */
export interface HerdShare {
  /** Starts the users; none sends at or after `stopAtEpochMs` (undefined: until finished). */
  start(stopAtEpochMs: number | undefined): void;
  closeWindow(): Promise<ShareWindow>;
  /** Stops the users (an attempt in flight is not counted) and reports the last window and the totals. */
  finish(): Promise<ShareFinal>;
  /** Closes the connections (or ends the worker). */
  close(): Promise<void>;
}

/**
 * The users `range` of the herd on this thread (closed users), or the open-loop arrivals
 * (`options.arrivals`; those run in one share only). Each user draws from its own stream of
 * the seed, keyed by its number in the whole herd: its schedule is the same whichever shard,
 * thread or process runs it. `observe` wraps the share's window statistics, e.g. to count
 * attempts for the client's metrics as well.
 */
export function localShare(
  options: ClientOptions,
  range: UserRange,
  seed: number,
  observe: (stats: WindowStats) => HerdObserver = (stats) => stats,
): HerdShare & { readonly load: Herd | OpenLoop } {
  const clock = realClock;
  const transport = createHttpTransport(options.url, options.timeoutMs, {
    propagateDeadline: options.propagateDeadline,
    maxBodyBytes: options.maxBodyBytes,
  });
  const stats = new WindowStats(clock.now());
  const load = createLoad(
    { users: range.users, firstUser: range.firstUser, arrivals: options.arrivals, timeoutMs: options.timeoutMs, retry: options.retry },
    clock,
    { randomFor: (user) => streamRandom(seed, user) },
    transport,
    observe(stats),
  );
  const openLoop = load instanceof OpenLoop ? load : undefined;
  const loopDelay = new EventLoopDelay();
  const closeWindow = (): ShareWindow => {
    const report = stats.closeWindow(clock.now());
    return shareWindow(report, load.inFlight, openLoopTotals(openLoop), loopDelay.closeWindow(report.endMs - report.startMs));
  };
  return {
    load,
    // The end of the run as an instant of this thread's clock (each thread's performance.now() has its own origin).
    start: (stopAtEpochMs) => load.start(stopAtEpochMs === undefined ? Infinity : clock.now() + (stopAtEpochMs - Date.now())),
    closeWindow: async () => closeWindow(),
    finish: async () => {
      const window = closeWindow();
      load.stop();
      loopDelay.stop();
      return { window, totals: shareWindow(stats.totals(clock.now()), 0, openLoopTotals(openLoop), undefined) };
    },
    close: () => transport.close(),
  };
}

function shareWindow(
  report: WindowReport,
  inFlight: number,
  openLoop: OpenLoopTotals | undefined,
  eventLoopDelay: LatencySummary | undefined,
): ShareWindow {
  return {
    counts: report.counts,
    histogram: report.histogram,
    maxLatencyMs: report.latency?.maxMs,
    latenessHistogram: report.latenessHistogram,
    maxLatenessMs: report.lateness?.maxMs,
    eventLoopDelay,
    inFlight,
    openLoop,
  };
}

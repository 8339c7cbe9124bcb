import { streamRandom } from "../backoff/random.ts";
import { realClock } from "../clock/real-clock.ts";
import type { HerdObserver } from "../model/attempt.ts";
import type { Herd } from "../model/herd.ts";
import type { LatencyHistogram } from "../model/latency-histogram.ts";
import { createLoad } from "../model/load.ts";
import { OpenLoop, type OpenLoopTotals, openLoopTotals } from "../model/open-loop.ts";
import { type Counts, WindowStats } from "../model/window-stats.ts";
import { createHttpTransport } from "./attempt.ts";
import type { ClientOptions } from "./options.ts";
import type { UserRange } from "./shard.ts";

/** What one share of the herd counted in a window (or over the whole run). */
export interface ShareWindow {
  readonly counts: Counts;
  readonly histogram: LatencyHistogram | undefined;
  /** The exact longest OK latency (a histogram knows it only to its bucket's width). */
  readonly maxLatencyMs: number | undefined;
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
  start(): void;
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
  const transport = createHttpTransport(options.url, options.timeoutMs, { propagateDeadline: options.propagateDeadline });
  const stats = new WindowStats(clock.now());
  const load = createLoad(
    { users: range.users, firstUser: range.firstUser, arrivals: options.arrivals, timeoutMs: options.timeoutMs, retry: options.retry },
    clock,
    { randomFor: (user) => streamRandom(seed, user) },
    transport,
    observe(stats),
  );
  const openLoop = load instanceof OpenLoop ? load : undefined;
  const closeWindow = (): ShareWindow => {
    const report = stats.closeWindow(clock.now());
    return {
      counts: report.counts,
      histogram: report.histogram,
      maxLatencyMs: report.latency?.maxMs,
      inFlight: load.inFlight,
      openLoop: openLoopTotals(openLoop),
    };
  };
  return {
    load,
    start: () => load.start(),
    closeWindow: async () => closeWindow(),
    finish: async () => {
      const window = closeWindow();
      load.stop();
      const totals = stats.totals(clock.now());
      return {
        window,
        totals: {
          counts: totals.counts,
          histogram: totals.histogram,
          maxLatencyMs: totals.latency?.maxMs,
          inFlight: 0,
          openLoop: openLoopTotals(openLoop),
        },
      };
    },
    close: () => transport.close(),
  };
}

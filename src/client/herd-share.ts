import { streamRandom } from "../backoff/random.ts";
import { realClock } from "../clock/real-clock.ts";
import { Herd } from "../model/herd.ts";
import type { LatencyHistogram } from "../model/latency-histogram.ts";
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
 * The users `range` of the herd on this thread. Each user draws from its own stream of the
 * seed, keyed by its number in the whole herd: its schedule is the same whichever shard,
 * thread or process runs it.
 */
export function localShare(options: ClientOptions, range: UserRange, seed: number): HerdShare & { readonly inFlight: number } {
  const clock = realClock;
  const transport = createHttpTransport(options.url, options.timeoutMs);
  const stats = new WindowStats(clock.now());
  const herd = new Herd(clock, { randomFor: (user) => streamRandom(seed, user) }, transport, stats, {
    users: range.users,
    firstUser: range.firstUser,
    timeoutMs: options.timeoutMs,
    retry: options.retry,
  });
  const closeWindow = (): ShareWindow => {
    const report = stats.closeWindow(clock.now());
    return { counts: report.counts, histogram: report.histogram, maxLatencyMs: report.latency?.maxMs, inFlight: herd.inFlight };
  };
  return {
    get inFlight() {
      return herd.inFlight;
    },
    start: () => herd.start(),
    closeWindow: async () => closeWindow(),
    finish: async () => {
      const window = closeWindow();
      herd.stop();
      const totals = stats.totals(clock.now());
      return {
        window,
        totals: { counts: totals.counts, histogram: totals.histogram, maxLatencyMs: totals.latency?.maxMs, inFlight: 0 },
      };
    },
    close: () => transport.close(),
  };
}

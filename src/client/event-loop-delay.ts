import { monitorEventLoopDelay } from "node:perf_hooks";
import type { LatencySummary } from "../model/latency-histogram.ts";

/** How often the monitor samples the loop, ms: Node's default; finer costs the loop itself. */
const RESOLUTION_MS = 10;

/**
 * The event loop's delay in this thread, per window (Node's `perf_hooks.monitorEventLoopDelay`):
 * how much later than asked a timer of the sampler ran. A thread whose loop is this late
 * sends its attempts late too, whatever the server does.
 */
export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.histogram.enable();
  }

  /**
   * The window's p50, p99 and maximum in ms, and a fresh start. A window of `windowMs` with no
   * sample at all had its loop blocked throughout: its delay was at least the window's length.
   * Undefined for a window too short to sample.
   */
  closeWindow(windowMs: number): LatencySummary | undefined {
    const histogram = this.histogram;
    const blocked = windowMs >= 2 * RESOLUTION_MS ? { p50Ms: windowMs, p99Ms: windowMs, maxMs: windowMs } : undefined;
    const summary =
      histogram.count === 0
        ? blocked
        : { p50Ms: histogram.percentile(50) / 1e6, p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 };
    histogram.reset();
    return summary;
  }

  stop(): void {
    this.histogram.disable();
  }
}

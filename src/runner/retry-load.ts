import type { Transport } from "../model/attempt.ts";
import { ManualClock } from "../clock/manual-clock.ts";
import { seededRandom } from "../backoff/random.ts";
import { WindowStats } from "../model/window-stats.ts";
import { createLoad } from "../model/load.ts";
import { fifoDelays } from "./simulate.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";

/** Users simulated to estimate a herd's load; larger herds are scaled from this many. */
const SAMPLE_USERS = 20_000;
/** The same for open-loop arrivals: arrivals per second simulated, larger rates scaled. */
const SAMPLE_RATE_PER_SEC = 2_000;
const MEASURE_WINDOW_MS = 5_000;

/** A server that never answers: every attempt can only time out. */
const DEAD_SERVER: Transport = { send: () => undefined, abort: () => {} };

/**
 * The attempts per second a strategy's herd sends at a server that has been down for
 * `outageMs`: the last five seconds of a run against a server that never answers.
 */
export function retryLoadWhileDown(config: SimulationConfig, outageMs: number): number {
  const open = config.arrivals?.kind === "open" ? config.arrivals : undefined;
  // The load is proportional to the users or the arrival rate: simulate a sample, scale it up.
  const scale =
    open === undefined
      ? config.users / Math.min(config.users, SAMPLE_USERS)
      : open.ratePerSec / Math.min(open.ratePerSec, SAMPLE_RATE_PER_SEC);
  const clock = new ManualClock(0, fifoDelays(config));
  const stats = new WindowStats(0);
  const sample = {
    ...config,
    users: Math.round(config.users / scale),
    arrivals:
      open === undefined
        ? open
        : { ...open, ratePerSec: open.ratePerSec / scale, maxChains: Math.max(1, Math.round(open.maxChains / scale)) },
  };
  const herd = createLoad(sample, clock, seededRandom(config.seed), DEAD_SERVER, stats);
  herd.start();
  const measureFrom = Math.max(0, outageMs - MEASURE_WINDOW_MS);
  clock.runUntil(measureFrom);
  const before = stats.totals(clock.now()).counts.attempts;
  clock.runUntil(outageMs);
  const attempts = stats.totals(clock.now()).counts.attempts - before;
  herd.stop();
  return (attempts / Math.max(1, outageMs - measureFrom)) * 1000 * scale;
}

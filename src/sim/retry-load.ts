import { Herd, type Transport } from "../model/herd.ts";
import { ManualClock } from "../clock/manual-clock.ts";
import { seededRandom } from "../backoff/random.ts";
import { WindowStats } from "../model/window-stats.ts";
import { fifoDelays, type SimulationConfig } from "./simulate.ts";

/** Users simulated to estimate a herd's load; larger herds are scaled from this many. */
const SAMPLE_USERS = 20_000;
const MEASURE_WINDOW_MS = 5_000;

/** A server that never answers: every attempt can only time out. */
const DEAD_SERVER: Transport = { send: () => undefined, abort: () => {} };

/**
 * The attempts per second a strategy's herd sends at a server that has been down for
 * `outageMs`: the last five seconds of a run against a server that never answers.
 */
export function retryLoadWhileDown(config: SimulationConfig, outageMs: number): number {
  const users = Math.min(config.users, SAMPLE_USERS);
  const clock = new ManualClock(0, fifoDelays(config));
  const stats = new WindowStats(0);
  const herd = new Herd(clock, seededRandom(config.seed), DEAD_SERVER, stats, {
    users,
    timeoutMs: config.timeoutMs,
    retry: config.retry,
  });
  herd.start();
  const measureFrom = Math.max(0, outageMs - MEASURE_WINDOW_MS);
  clock.runUntil(measureFrom);
  const before = stats.totals(clock.now()).counts.attempts;
  clock.runUntil(outageMs);
  const attempts = stats.totals(clock.now()).counts.attempts - before;
  herd.stop();
  return ((attempts / Math.max(1, outageMs - measureFrom)) * 1000 * config.users) / users;
}

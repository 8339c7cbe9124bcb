import { streamRandom } from "../../src/backoff/random.ts";
import { ManualClock } from "../../src/clock/manual-clock.ts";
import { parseClientArgs, resolveClientOptions } from "../../src/options/client.ts";
import { partOf } from "../../src/client/shard.ts";
import { Herd, type Transport } from "../../src/model/herd.ts";
import { OK_RESULT } from "../../src/model/outcome.ts";
import { type Counts, WindowStats } from "../../src/model/window-stats.ts";

/** A client run as the real ./client would make it against a server that answers OK at once. */
export interface ScheduleRun {
  readonly clients: number;
  readonly lambdaS: number;
  readonly intervalMs: number;
  readonly durationMs: number;
  readonly seed: number;
}

/** The client flags for such a run (without -url, -start-at, -shard). */
export const scheduleFlags = (run: ScheduleRun): string[] => [
  "-clients",
  String(run.clients),
  "-lambda",
  String(run.lambdaS),
  "-interval",
  `${run.intervalMs}ms`,
  "-duration",
  `${run.durationMs}ms`,
  "-seed",
  String(run.seed),
];

/**
 * The run in virtual time with the client's own Herd, its per-user random streams and the
 * same flags, against a server that answers every attempt OK at once: the windows' counts
 * and every attempt's send time. A real run against a server that always answers OK makes
 * the same attempts, each a little later (round trips and timer lateness add up per user).
 */
export function virtualRun(run: ScheduleRun): { windows: Counts[]; totals: Counts; sendTimesMs: number[] } {
  const parsed = parseClientArgs(scheduleFlags(run));
  if (parsed.kind !== "run") throw new Error("help?");
  const options = resolveClientOptions(parsed.values);
  const clock = new ManualClock();
  const stats = new WindowStats(0);
  const sendTimesMs: number[] = [];
  const transport: Transport<undefined> = {
    send(sink) {
      sendTimesMs.push(clock.now());
      sink.done(OK_RESULT);
      return undefined;
    },
    abort() {},
  };
  const range = partOf({ firstUser: 0, users: run.clients }, 0, 1);
  const herd = new Herd(clock, { randomFor: (user) => streamRandom(run.seed, user) }, transport, stats, {
    users: range.users,
    firstUser: range.firstUser,
    timeoutMs: options.timeoutMs,
    retry: options.retry,
  });
  herd.start();
  const windows: Counts[] = [];
  for (let endMs = run.intervalMs; endMs <= run.durationMs; endMs += run.intervalMs) {
    // The real client's windows end at their grid points and its attempts at those instants
    // fall after them; runUntil fires timers due at endMs too, so stop just before.
    clock.runUntil(endMs - 1e-9);
    windows.push(stats.closeWindow(clock.now()).counts);
  }
  herd.stop();
  return { windows, totals: stats.totals(run.durationMs).counts, sendTimesMs };
}

/**
 * The first seed from `from` whose virtual attempts all lie well clear of the window
 * boundaries: none in [b - beforeMs, b + afterMs) for any boundary b (the last is the end of
 * the run). A real attempt comes later than its virtual one by the run's accumulated round
 * trips and timer lateness (up to `beforeMs`), and a window may close late (up to
 * `afterMs`); within those bounds every attempt lands in the same window as in virtual time.
 */
export function seedClearOfBoundaries(run: Omit<ScheduleRun, "seed">, beforeMs: number, afterMs: number, from = 1): number {
  for (let seed = from; seed < from + 100_000; seed++) {
    const { sendTimesMs } = virtualRun({ ...run, seed });
    const clear = sendTimesMs.every((time) => {
      for (let boundary = run.intervalMs; boundary <= run.durationMs; boundary += run.intervalMs) {
        if (time >= boundary - beforeMs && time < boundary + afterMs) return false;
      }
      return true;
    });
    if (clear) return seed;
  }
  throw new Error("no seed clear of the boundaries: fewer attempts or narrower margins");
}

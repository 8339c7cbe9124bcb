import { z } from "zod";
import type { ServerSample } from "../model/timeline.ts";
import { CONTROLLED_KINDS, type ControlledKind } from "../model/faults/kinds.ts";
import { checkLine, ContractError, jsonLines, type LinePlace, parseJsonObject } from "./json-line.ts";

/*
 * The server's -json line (once a second), also its GET /stats body and, with "source":
 * "server", the simulator's. One object per line; an infinite delay is written as null.
 * Its type and the one reader are here; the writer, serverLine(), is in
 * server-line-writer.ts, so that the programs that only write lines never load the
 * validator (zod's many files at start-up would not fit a process short of descriptors).
 * A new field is one entry in SERVER_LINE (optional if older lines lack it) and one in
 * serverLine().
 */

const COUNT = z.number().int().nonnegative();
/** Milliseconds; null when the delay outgrew every number. */
const DELAY_MS = z.number().nonnegative().nullable();

/** The fault control's kinds, as zod's enum takes them (the registry lists at least one). */
const CONTROLLED_KINDS_TUPLE = CONTROLLED_KINDS as [ControlledKind, ...ControlledKind[]];

export const SERVER_LINE = z.object({
  time: z.string(),
  epochMs: z.number(),
  concurrency: COUNT,
  lastDelayMs: DELAY_MS,
  /** The same delay in Go notation. */
  lastDelay: z.string(),
  /** The most in service since the previous line, and its delay. */
  peakConcurrency: COUNT,
  peakDelayMs: DELAY_MS,
  admitted: COUNT,
  served: COUNT,
  abandoned: COUNT,
  abandonedInService: COUNT,
  cancelled: COUNT,
  shed: COUNT,
  expired: COUNT,
  errorsInjected: COUNT,
  /** The queue model only (-model queue): requests waiting for a thread, threads busy, threads in all. */
  queueLength: COUNT.optional(),
  threadsBusy: COUNT.optional(),
  threads: COUNT.optional(),
  /**
   * With the fault control on (-admin-listen): the faults it has set, [] when none. Absent
   * without the control. (See src/server/fault-control.ts.)
   */
  faults: z.array(z.object({ kind: z.enum(CONTROLLED_KINDS_TUPLE), factor: z.number().nonnegative() })).optional(),
  /**
   * A middle tier only (-upstream, src/model/servers/upstream-pool.ts): its calls to the tier
   * below, totals since it started. requests: first attempts sent (the tier's own user requests,
   * k per request for a fan-out of k); attempts: every attempt sent, retries included, and how
   * they ended; refused: attempts its own throttle or breaker refused (never sent); failures:
   * calls that failed for good (answered 502); inFlight: calls in flight now, each holding a thread.
   */
  upstream: z
    .object({
      requests: COUNT,
      attempts: COUNT,
      attemptsOk: COUNT,
      attemptsError: COUNT,
      attemptsTimedout: COUNT,
      refused: COUNT,
      failures: COUNT,
      inFlight: COUNT,
    })
    .optional(),
});

export type ServerLine = z.infer<typeof SERVER_LINE>;

const WHAT = "the server's -json output";

/** One line of the server's -json output, checked; a LineError naming the file and line otherwise. */
export function parseServerLine(text: string, place: LinePlace): ServerLine {
  return checkLine(SERVER_LINE, parseJsonObject(text, place, WHAT), place, WHAT);
}

/** A line as a point of the server's timeline, in ms from `startEpochMs`. */
export function serverSample(line: ServerLine, startEpochMs: number): ServerSample {
  return {
    atMs: line.epochMs - startEpochMs,
    concurrency: line.concurrency,
    lastDelayMs: line.lastDelayMs ?? Infinity,
    peakConcurrency: line.peakConcurrency,
    peakDelayMs: line.peakDelayMs ?? Infinity,
    abandoned: line.abandoned,
    abandonedInService: line.abandonedInService,
    cancelled: line.cancelled,
    expired: line.expired,
    ...(line.threads === undefined ? {} : { queueLength: line.queueLength, threadsBusy: line.threadsBusy, threads: line.threads }),
  };
}

/**
 * The server's timeline from its -json output (`lines` as in the file, numbered from 1),
 * skipping lines that are not JSON. `requireSome`: a file without one server line is an error too.
 */
export function readServerSamples(
  lines: readonly string[],
  startEpochMs: number,
  file: string,
  options: { requireSome?: boolean } = {},
): ServerSample[] {
  const samples = jsonLines(lines).map(({ text, line }) => serverSample(parseServerLine(text, { file, line }), startEpochMs));
  if (options.requireSome === true && samples.length === 0) throw new ContractError(`${file}: no JSON line (is this ${WHAT}?)`);
  return samples;
}

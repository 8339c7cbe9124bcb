import { z } from "zod";
import { formatDuration } from "../cli/duration.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";
import type { ServerSample } from "../model/timeline.ts";
import { checkLine, ContractError, jsonLines, type LinePlace, parseJsonObject } from "./json-line.ts";

/*
 * The server's -json line (once a second), also its GET /stats body and, with "source":
 * "server", the simulator's. One object per line; an infinite delay is written as null.
 * A new field is one entry in SERVER_LINE (optional if older lines lack it) and one in
 * serverLine().
 */

const COUNT = z.number().int().nonnegative();
/** Milliseconds; null when the delay outgrew every number. */
const DELAY_MS = z.number().nonnegative().nullable();

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
});

export type ServerLine = z.infer<typeof SERVER_LINE>;

const WHAT = "the server's -json output";

/** The line for one snapshot of the service. */
export function serverLine(epochMs: number, snapshot: ServiceSnapshot): ServerLine {
  return {
    time: new Date(epochMs).toISOString(),
    epochMs,
    concurrency: snapshot.concurrency,
    lastDelayMs: Number.isFinite(snapshot.lastDelayMs) ? snapshot.lastDelayMs : null,
    lastDelay: formatDuration(snapshot.lastDelayMs),
    peakConcurrency: snapshot.peakConcurrency,
    peakDelayMs: Number.isFinite(snapshot.peakDelayMs) ? snapshot.peakDelayMs : null,
    admitted: snapshot.admitted,
    served: snapshot.served,
    abandoned: snapshot.abandoned,
    abandonedInService: snapshot.abandonedInService,
    cancelled: snapshot.cancelled,
    shed: snapshot.shed,
    expired: snapshot.expired,
    errorsInjected: snapshot.errorsInjected,
  };
}

/** serverLine() as the text the server prints. */
export function formatServerJson(epochMs: number, snapshot: ServiceSnapshot): string {
  return JSON.stringify(serverLine(epochMs, snapshot));
}

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

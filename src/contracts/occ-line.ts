import { z } from "zod";
import { checkLine, type LinePlace, parseJsonObject } from "./json-line.ts";

/*
 * The OCC workload's -json line (./sim -workload occ, ./client -workload occ): one per
 * strategy and client count, with the AWS backoff blog's two figures. The type and the one
 * reader are here; the writer (occ-line-writer.ts) does not load the validator.
 */

const COUNT = z.number().int().nonnegative();

export const OCC_LINE = z.object({
  workload: z.literal("occ"),
  /** The simulator's means over -trials runs, or one real run of the client. */
  source: z.enum(["sim", "client"]),
  strategy: z.string(),
  clients: COUNT,
  trials: COUNT,
  /** Writes (PUTs) tried, landed or refused: the blog's "calls", its measure of work. */
  writes: z.number().nonnegative(),
  /** Reads and writes: every call. */
  calls: z.number().nonnegative(),
  /** Time until every client's write had landed, ms from the start. */
  completionMs: z.number().nonnegative(),
  /** Writes that landed (the row's version at the end, for the client). */
  landed: z.number().nonnegative(),
  /** Calls that failed for another reason than a conflict (client only: refused connections, 5xx). */
  errors: COUNT.optional(),
  seed: z.number().int().optional(),
  /** Client only: how late its backoff timers fired at most, ms (the client's own lag, not the server's). */
  timersLateMs: z.number().nonnegative().optional(),
  /** Client only: mean round trip of a call, ms (the simulator's is two network delays). */
  meanCallMs: z.number().nonnegative().optional(),
});

export type OccLine = z.infer<typeof OCC_LINE>;

const WHAT = "an OCC workload's -json line";

export function parseOccLine(text: string, place: LinePlace): OccLine {
  return checkLine(OCC_LINE, parseJsonObject(text, place, WHAT), place, WHAT);
}

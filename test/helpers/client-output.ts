import type { Counts } from "../../src/model/window-stats.ts";

/** One -json line of ./client: a window, or the summary at the end. */
export interface WindowJson extends Counts {
  okPerSec: number;
  windowMs: number;
  summary?: boolean;
  partial?: boolean;
}

/** The reference client's line, which ./client's window lines start with. */
export const REFERENCE_PREFIX = /^OK: \d+\.\d\d req\/sec, errors: \d+\.\d\d req\/sec, timedout: \d+\.\d\d req\/sec/;

/** The JSON lines of a client run with -json. */
export const jsonLines = (lines: readonly string[]): WindowJson[] =>
  lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as WindowJson);

/** The windows and the summary of a client run with -json. */
export function windowsAndSummary(lines: readonly string[]): { windows: WindowJson[]; summary: WindowJson } {
  const objects = jsonLines(lines);
  const summary = objects.find((object) => object.summary === true)!;
  return { windows: objects.filter((object) => object.summary !== true), summary };
}

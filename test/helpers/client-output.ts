import { type ClientReportLine, clientReportLines } from "./output-lines.ts";

/** The reference client's line, which ./client's window lines start with. */
export const REFERENCE_PREFIX = /^OK: \d+\.\d\d req\/sec, errors: \d+\.\d\d req\/sec, timedout: \d+\.\d\d req\/sec/;

/** The JSON lines of a client run with -json, read through the client's line contract. */
export const jsonLines = (lines: readonly string[]): ClientReportLine[] => clientReportLines(lines);

/** The windows and the summary of a client run with -json. */
export function windowsAndSummary(lines: readonly string[]): { windows: ClientReportLine[]; summary: ClientReportLine } {
  const objects = jsonLines(lines);
  const summary = objects.find((object) => object.summary === true)!;
  return { windows: objects.filter((object) => object.summary !== true), summary };
}

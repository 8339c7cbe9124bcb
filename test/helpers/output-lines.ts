import { type ClientReport, type ClientSummaryLine, type ClientWindowLine, parseClientLine } from "../../src/contracts/client-line.ts";
import { jsonLines } from "../../src/contracts/json-line.ts";
import { parseServerLine, type ServerLine } from "../../src/contracts/server-line.ts";

/*
 * The programs' JSON lines as the tests read them: through the same contracts as the demo
 * and merge, so a line that breaks its contract fails the test with its line number.
 */

/** A client window or summary, with the fields only one of them has made optional. */
export type ClientReportLine = ClientReport &
  Partial<Pick<ClientSummaryLine, "summary" | "reason">> &
  Partial<Pick<ClientSummaryLine, "behindWindows">> &
  Partial<
    Pick<ClientWindowLine, "gridEpochMs" | "shard" | "latencyHistogram" | "partial" | "behind" | "behindReason" | "eventLoopDelayMs">
  >;

/** The windows and summary in a client's -json output (a "stopped before the start" line left out). */
export function clientReportLines(lines: readonly string[], file = "the client's output"): ClientReportLine[] {
  return jsonLines(lines).flatMap(({ text, line }) => {
    const { kind, ...parsed } = parseClientLine(text, { file, line });
    return kind === "not-started" ? [] : [parsed as ClientReportLine];
  });
}

/** The lines of a server's -json output. */
export function serverLines(lines: readonly string[], file = "the server's output"): ServerLine[] {
  return jsonLines(lines).map(({ text, line }) => parseServerLine(text, { file, line }));
}

/** The reference client's line, which ./client's window lines start with. */
export const REFERENCE_PREFIX = /^OK: \d+\.\d\d req\/sec, errors: \d+\.\d\d req\/sec, timedout: \d+\.\d\d req\/sec/;

/** The windows and the summary of a client run with -json. */
export function windowsAndSummary(lines: readonly string[]): { windows: ClientReportLine[]; summary: ClientReportLine } {
  const objects = clientReportLines(lines);
  const summary = objects.find((object) => object.summary === true)!;
  return { windows: objects.filter((object) => object.summary !== true), summary };
}

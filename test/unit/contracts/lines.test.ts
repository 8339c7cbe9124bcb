import { describe, expect, it } from "vitest";
import { parseClientLine, readClientWindows } from "../../../src/contracts/client-line.ts";
import { clientNotStartedLine, clientSummaryLine, clientWindowLine } from "../../../src/contracts/client-line-writer.ts";
import { LineError } from "../../../src/contracts/json-line.ts";
import { parseServerLine, readServerSamples } from "../../../src/contracts/server-line.ts";
import { serverLine } from "../../../src/contracts/server-line-writer.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";

/** A client that kept up: no event-loop figure, not behind. */
const KEPT_UP = { eventLoopDelay: undefined, behind: undefined };

const SNAPSHOT = {
  concurrency: 40,
  lastDelayMs: Infinity,
  peakConcurrency: 45,
  peakDelayMs: 2_500,
  admitted: 100,
  served: 50,
  abandoned: 3,
  abandonedInService: 2,
  cancelled: 0,
  shed: 1,
  expired: 0,
  errorsInjected: 0,
};

function window() {
  const stats = new WindowStats(0);
  stats.attemptStarted(false);
  stats.attemptEnded({ outcome: "ok" }, 120);
  stats.attemptStarted(true);
  stats.attemptEnded({ outcome: "error", errorKind: "refused" }, 3);
  return { report: stats.closeWindow(2_000), totals: stats.totals(2_000) };
}

describe("the server's line", () => {
  it("reads back what the server writes, an infinite delay as null on the line and Infinity in the timeline", () => {
    const text = JSON.stringify(serverLine(10_000, SNAPSHOT));
    expect(parseServerLine(text, { file: "s", line: 1 })).toEqual(JSON.parse(text));
    expect(JSON.parse(text)).toMatchObject({ lastDelayMs: null, lastDelay: expect.any(String) as string });
    const [sample] = readServerSamples(["server: listening", text], 4_000, "s");
    expect(sample).toMatchObject({ atMs: 6_000, concurrency: 40, lastDelayMs: Infinity, peakDelayMs: 2_500, abandoned: 3 });
  });

  it("refuses a line that is not the server's with one line naming the file, the line and the field", () => {
    const client = JSON.stringify(clientWindowLine(window().report, 0, 2_000, { gridEpochMs: 2_000 }, KEPT_UP));
    let error: unknown;
    try {
      readServerSamples(["text", client], 0, "client.log");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LineError);
    expect((error as LineError).message).toBe(
      'client.log:2: "concurrency": expected number, received undefined (is this the server\'s -json output?)',
    );
    expect(() => parseServerLine(JSON.stringify({ ...serverLine(0, SNAPSHOT), served: 1.5 }), { file: "f", line: 3 })).toThrow(
      /^f:3: "served": /,
    );
    expect(() => parseServerLine("[1]", { file: "f", line: 9 })).toThrow("f:9: not a JSON object");
    expect(() => readServerSamples(["no json here"], 0, "f", { requireSome: true })).toThrow("f: no JSON line");
  });
});

describe("the client's lines", () => {
  it("reads back windows, summaries and a run stopped before its start, each by its kind", () => {
    const { report, totals } = window();
    const windowText = JSON.stringify(clientWindowLine(report, 2, 2_000, { gridEpochMs: 2_000, shard: "0/2", partial: true }, KEPT_UP));
    const summaryText = JSON.stringify(clientSummaryLine(totals, "duration", 2_010, "0/2", 0, { aliveChains: 1, droppedArrivals: 0 }));
    const windowLine = parseClientLine(windowText, { file: "c", line: 1 });
    expect(windowLine).toEqual({ kind: "window", ...JSON.parse(windowText) });
    expect(windowLine).toMatchObject({ ok: 1, errors: 1, retries: 1, errorKinds: { refused: 1 }, partial: true, inFlight: 2 });
    expect(parseClientLine(summaryText, { file: "c", line: 2 })).toMatchObject({ kind: "summary", reason: "duration", aliveChains: 1 });
    expect(parseClientLine(JSON.stringify(clientNotStartedLine("SIGINT")), { file: "c", line: 1 })).toEqual({
      kind: "not-started",
      summary: true,
      reason: "SIGINT",
      started: false,
    });
    // The timeline holds the windows only, in ms from the start given.
    expect(readClientWindows([windowText, summaryText], 0, "c")).toEqual([
      { startMs: 0, endMs: 2_000, okPerSec: 0.5, errorsPerSec: 0.5, timedoutPerSec: 0, attemptsPerSec: 1, retriesPerSec: 0.5 },
    ]);
  });

  it("refuses a window with a field missing or of the wrong kind, naming the file and line", () => {
    const line = clientWindowLine(window().report, 0, 2_000, { gridEpochMs: 2_000 }, KEPT_UP);
    const { okPerSec: _dropped, ...withoutRate } = line;
    expect(() => readClientWindows(["", JSON.stringify(withoutRate)], 0, "c.log")).toThrow(
      new LineError({ file: "c.log", line: 2 }, '"okPerSec": expected number, received undefined (is this a client\'s -json output?)'),
    );
    expect(() => parseClientLine(JSON.stringify({ ...line, errorKinds: { refused: -1 } }), { file: "c.log", line: 7 })).toThrow(
      /^c\.log:7: "errorKinds\.refused": /,
    );
    expect(() => parseClientLine("{oops", { file: "c.log", line: 1 })).toThrow("c.log:1: not valid JSON");
  });
});

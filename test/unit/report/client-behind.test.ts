import { describe, expect, it } from "vitest";
import { clientSummaryLine, clientWindowLine } from "../../../src/contracts/client-line-writer.ts";
import { clientEvent } from "../../../src/dashboard/events.ts";
import { computeMetrics } from "../../../src/model/scenario-metrics.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { comparisonTable, reportHtml } from "../../../src/report/report.ts";
import { readClientWindows } from "../../../src/contracts/client-line.ts";

const START = 1_700_000_000_000;

/**
 * A client's -json lines as the demo reads them: 5 s windows of 100 OK/s, the given ones
 * marked behind (as ./client marks them), then the summary.
 */
function clientLines(count: number, behind: ReadonlySet<number>): string[] {
  const stats = new WindowStats(0);
  const lines: string[] = [];
  for (let index = 0; index < count; index++) {
    for (let ok = 0; ok < 500; ok++) {
      stats.attemptStarted(false, behind.has(index) ? 900 : 1);
      stats.attemptEnded({ outcome: "ok" }, 100);
    }
    const report = stats.closeWindow((index + 1) * 5_000);
    const epochMs = START + (index + 1) * 5_000;
    const self = behind.has(index)
      ? { eventLoopDelay: undefined, behind: "attempts sent late: lateness p99 900 ms (max 900 ms) above 200 ms" }
      : { eventLoopDelay: undefined, behind: undefined };
    lines.push(JSON.stringify(clientWindowLine(report, 0, epochMs, { gridEpochMs: epochMs }, self)));
  }
  lines.push(JSON.stringify(clientSummaryLine(stats.totals(count * 5_000), "duration", START + count * 5_000, undefined, behind.size)));
  return lines;
}

describe("the demo's reading of a client that fell behind", () => {
  const phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 60_000 };
  const server = [
    { atMs: 1_000, concurrency: 5, lastDelayMs: 100, peakConcurrency: 6, peakDelayMs: 100 },
    { atMs: 36_000, concurrency: 5, lastDelayMs: 100, peakConcurrency: 6, peakDelayMs: 100 },
  ];

  it("reads the marks from the client's -json windows and gives the invalid verdict, in the report and on the dashboard", () => {
    const kept = readClientWindows(clientLines(12, new Set()), START, "client.jsonl");
    expect(kept.every((window) => window.behind === undefined)).toBe(true);
    expect(computeMetrics(server, kept, phases, 30).verdict).toBe("recovered");

    const client = readClientWindows(clientLines(12, new Set([8])), START, "client.jsonl");
    expect(client.map((window) => window.behind !== undefined)).toEqual(Array.from({ length: 12 }, (_, index) => index === 8));
    const metrics = computeMetrics(server, client, phases, 30);
    expect(metrics.verdict).toBe("invalid");
    expect(metrics.why).toContain("lateness p99 900 ms");

    const result = { strategy: "fixed", phases, server, client, metrics, concurrencyLimit: 30 };
    expect(comparisonTable([result]).split("\n")[2]).toMatch(/^fixed +invalid /);
    const html = reportHtml({ title: "run", results: [result], settings: [], strategySvgs: [""], overlaySvg: "" });
    expect(html).toContain('<span class="invalid">invalid</span>');
    expect(html).toContain("The client could not keep up in the window 40.0 s to 45.0 s");
    expect(clientEvent(0, client[8]!)).toMatchObject({ kind: "client", behind: expect.stringContaining("lateness p99 900 ms") as string });
    expect(clientEvent(0, client[7]!)).not.toHaveProperty("behind");
  });

  it("does not let a window marked before the outage change the verdict", () => {
    const client = readClientWindows(clientLines(12, new Set([1])), START, "client.jsonl");
    expect(computeMetrics(server, client, phases, 30).verdict).toBe("recovered");
  });
});

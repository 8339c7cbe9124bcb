import { describe, expect, it } from "vitest";
import { computeMetrics } from "../../../src/model/scenario-metrics.ts";
import type { ClientWindow } from "../../../src/model/timeline.ts";
import { VERDICT_DEFINITIONS } from "../../../src/model/verdict.ts";
import { comparisonTable, reportHtml, type StrategyResult } from "../../../src/report/report.ts";

const windows = (count: number): ClientWindow[] =>
  Array.from({ length: count }, (_, index) => ({
    startMs: index * 5_000,
    endMs: (index + 1) * 5_000,
    okPerSec: 100,
    errorsPerSec: 0,
    timedoutPerSec: 0,
    attemptsPerSec: 100,
  }));

function result(endMs: number): StrategyResult {
  const phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs };
  const server = [{ atMs: 1_000, concurrency: 5, lastDelayMs: 100, peakConcurrency: 6, peakDelayMs: 100 }];
  const client = windows(Math.floor(endMs / 5_000));
  return { strategy: "fixed", phases, server, client, metrics: computeMetrics(server, client, phases, 30), concurrencyLimit: 30 };
}

describe("the report's verdicts", () => {
  it("shows no figure after a resume the run never reached, and the reason for the verdict", () => {
    const short = result(30_000);
    expect(short.metrics.verdict).toBe("too-short");
    const table = comparisonTable([short]).split("\n");
    expect(table[2]).toMatch(/^fixed +too-short +100\.0 +\S+ \(peak \S+\) +- +- +- +- +- +- +-$/);
    const html = reportHtml({ title: "run", results: [short], settings: [], strategySvgs: [""], overlaySvg: "" });
    expect(html).toContain(
      '<h3>fixed: <span class="too-short">too-short</span></h3>\n<p>The run ended at 30.0 s, before the resume at 35.0 s: nothing to judge.',
    );
    for (const definition of Object.values(VERDICT_DEFINITIONS)) expect(html).toContain(definition);
  });
});

import { describe, expect, it } from "vitest";
import { clientWindowLine } from "../../../src/contracts/client-line-writer.ts";
import { readClientWindows, readClientWindowsOnGrid } from "../../../src/contracts/client-line.ts";
import { computeMetrics } from "../../../src/model/scenario-metrics.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";

const START = 1_700_000_000_000;

/**
 * A real client's -json windows on a 5 s grid anchored at START: the first opens at the anchor, each
 * closes `lateMs` after its grid point (as a timer does), with `okPerWindow[i]` answers in it.
 */
function lines(okPerWindow: readonly number[], lateMs: number): string[] {
  const stats = new WindowStats(0);
  return okPerWindow.map((ok, index) => {
    for (let answer = 0; answer < ok; answer++) {
      stats.attemptStarted(false, 1);
      stats.attemptEnded({ outcome: "ok" }, 100);
    }
    const gridEpochMs = START + (index + 1) * 5_000;
    const report = stats.closeWindow(gridEpochMs - START + lateMs);
    const self = { eventLoopDelay: undefined, behind: undefined };
    return JSON.stringify(clientWindowLine(report, 0, gridEpochMs + lateMs, { gridEpochMs }, self));
  });
}

describe("a real client's windows read on their grid slots", () => {
  const okPerWindow = [450, 520, 480, 0, 0, 0, 0, 300, 500, 500];

  it("places each window on its slot: ending at its grid point, starting where the one before ended", () => {
    const windows = readClientWindowsOnGrid(lines(okPerWindow, 6), START, "client.jsonl");
    expect(windows.map((window) => [window.startMs, window.endMs])).toEqual(
      okPerWindow.map((_, index) => [index * 5_000, (index + 1) * 5_000]),
    );
    // The rates are the client's, over the time it counted (from one close to the next: 5 s).
    expect(windows[1]!.okPerSec).toBeCloseTo(520 / 5, 6);
  });

  it("reads a last window cut short by the client's stop as it closed, not to the end of its slot", () => {
    const text = lines([450, 520], 6);
    const stats = new WindowStats(10_006);
    for (let answer = 0; answer < 30; answer++) {
      stats.attemptStarted(false, 1);
      stats.attemptEnded({ outcome: "ok" }, 100);
    }
    const report = stats.closeWindow(10_256);
    const self = { eventLoopDelay: undefined, behind: undefined };
    text.push(JSON.stringify(clientWindowLine(report, 0, START + 10_256, { gridEpochMs: START + 15_000, partial: true }, self)));
    const last = readClientWindowsOnGrid(text, START, "client.jsonl").at(-1)!;
    expect([last.startMs, last.endMs]).toEqual([10_000, 10_256]);
  });

  it("gives a stop on a grid point the two windows before it as its baseline, where reading them as they closed gives one", () => {
    const phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 50_000 };
    const text = lines(okPerWindow, 6);
    const onGrid = computeMetrics([], readClientWindowsOnGrid(text, START, "client.jsonl"), phases, 30);
    const asClosed = computeMetrics([], readClientWindows(text, START, "client.jsonl"), phases, 30);
    expect(onGrid.baselineOkPerSec).toBeCloseTo((520 + 480) / 2 / 5, 6);
    expect(asClosed.baselineOkPerSec).toBeCloseTo(520 / 5, 6);
  });
});

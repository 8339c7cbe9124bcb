import { describe, expect, it } from "vitest";
import { fiveSecondWindows } from "../../helpers/client-windows.ts";
import type { Phases } from "../../../src/model/timeline.ts";
import { judge, type WatchedService, watchedBackMs } from "../../../src/model/verdict.ts";

/*
 * The verdict on a service the experiment does not run (demo -target): a watcher's answers, one
 * every 250 ms here, stand for the server's reports. "Server back" is the first of three answers
 * in a row at baseline after the resume, unless three in a row not at baseline come after them.
 */
const PHASES: Phases = { stopAtMs: 5_000, resumeAtMs: 10_000, endMs: 20_000 };

/** Answers every 250 ms from `fromMs`, at baseline where `pattern`'s letter is "b", not where it is "x". */
function watched(fromMs: number, pattern: string): WatchedService {
  return { boundMs: 104, answers: [...pattern].map((letter, index) => ({ atMs: fromMs + 250 * index, atBaseline: letter === "b" })) };
}

describe("the verdict on a watched service", () => {
  it("is back from the first of three answers in a row at baseline after the resume, until three in a row are not", () => {
    // From the resume: 2 s not at baseline, a lucky pair, 1 s not, then at baseline to the end.
    expect(watchedBackMs(watched(10_000, "xxxxxxxxbbxxxxbbbbbb"), PHASES)).toBe(3_500);
    // Two at the end are not enough.
    expect(watchedBackMs(watched(10_000, "xxxxxxxxbb"), PHASES)).toBeUndefined();
    // Answers at baseline before the resume count for nothing; the last one after it is not.
    expect(watchedBackMs(watched(9_000, "bbbbbx"), PHASES)).toBeUndefined();
    // Nor do answers after the end.
    expect(watchedBackMs(watched(19_500, "xxbbbb"), PHASES)).toBeUndefined();
    // One or two slow answers after it are a gap in a queue, not a relapse: back stays where it was.
    expect(watchedBackMs(watched(10_000, "xxxxbbbbbbbbxbbbbbxx"), PHASES)).toBe(1_000);
    // Three in a row are a relapse: back is the first of the next three at baseline, or never.
    expect(watchedBackMs(watched(10_000, "xxbbbbxxxbbbb"), PHASES)).toBe(2_250);
    expect(watchedBackMs(watched(10_000, "bbbbbbxxxbb"), PHASES)).toBeUndefined();
  });

  it("judges from the watcher: collapsed where it is not back, recovered where it and the clients are", () => {
    const client = fiveSecondWindows([
      [40, 0],
      [40, 0],
      [0, 40],
      [40, 0],
    ]);
    const input = { server: [], client, phases: PHASES, concurrencyLimit: 30, baselineOkPerSec: 40 };
    const collapsed = judge({ ...input, client: client.slice(0, 3), watched: watched(10_000, "xxxxxxxx") });
    expect(collapsed.verdict).toBe("collapsed");
    expect(collapsed.why).toBe(
      "service not back at baseline (3 answers in a row within 104ms) by the watcher's last answer, 1.8 s after resume: a metastable failure",
    );
    const back = judge({ ...input, watched: watched(10_000, "xxbbbb") });
    expect(back).toMatchObject({ verdict: "recovering", serverBackMs: 500 });
    expect(back.why).toMatch(/^service back at baseline \(3 answers in a row within 104ms\) 0\.5 s after resume; /);
  });

  it("does not judge a run that began before the service was back at its baseline", () => {
    const run = judge({
      server: [],
      client: fiveSecondWindows([[40, 0]]),
      phases: PHASES,
      concurrencyLimit: 30,
      baselineOkPerSec: 40,
      watched: watched(10_000, "bbbb"),
      unsettled: "not back at its baseline after 1m0s",
    });
    expect(run.verdict).toBe("invalid");
    expect(run.why).toBe(
      "the service was not back at its baseline when the run began (not back at its baseline after 1m0s): the run is not judged",
    );
  });

  it("reads a simulated server as the watcher reads a real one when asked: a burst between reports does not hold it back", () => {
    // Reports every second from the resume: in service now / most since the last report. The
    // queue is back at baseline 2 s after the resume, but bursts of 9 between reports go on.
    const reports = [
      [20, 21],
      [12, 21],
      [3, 9],
      [2, 9],
      [4, 6],
      [1, 9],
      [3, 5],
      [2, 9],
      [3, 6],
      [1, 5],
    ].map(([concurrency, peak], index) => ({
      atMs: 10_000 + 1_000 * index,
      concurrency: concurrency!,
      peakConcurrency: peak!,
      lastDelayMs: 50,
      peakDelayMs: 50,
    }));
    const input = {
      server: reports,
      client: fiveSecondWindows([
        [40, 0],
        [40, 0],
        [40, 0],
        [40, 0],
      ]),
      phases: PHASES,
      concurrencyLimit: 8,
      baselineOkPerSec: 40,
    };
    // Read from the peaks, it is back only from the report that closes the last burst.
    expect(judge(input)).toMatchObject({ verdict: "recovered", serverBackMs: 7_000 });
    const asWatcher = judge({ ...input, readAsWatcher: true });
    expect(asWatcher).toMatchObject({ verdict: "recovered", serverBackMs: 2_000 });
    expect(asWatcher.why).toMatch(
      /^server back at baseline \(3 reports in a row with at most 8 in service, as a watcher sees it\) 2\.0 s after resume; /,
    );
    // Still above the limit at its last looks: not back, read either way.
    const stuck = judge({ ...input, server: reports.map((report) => ({ ...report, concurrency: 20 })), readAsWatcher: true });
    expect(stuck.verdict).toBe("collapsed");
    expect(stuck.why).toMatch(
      /^server not back at baseline \(3 reports in a row with at most 8 in service, as a watcher sees it\) by its last report, 9\.0 s after resume/,
    );
  });
});

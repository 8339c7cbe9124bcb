import { describe, expect, it } from "vitest";
import { fiveSecondWindows } from "../../helpers/client-windows.ts";
import type { ClientWindow, Phases, ServerSample } from "../../../src/model/timeline.ts";
import { clientsBackMs, judge, serverBackMs, VERDICT_DEFINITIONS } from "../../../src/model/verdict.ts";

/** One-second server reports from `startMs`, each [concurrency, peak of its interval]. */
function reports(startMs: number, values: readonly (readonly [number, number])[]): ServerSample[] {
  return values.map(([concurrency, peak], index) => ({
    atMs: startMs + index * 1_000,
    concurrency,
    lastDelayMs: 100,
    peakConcurrency: peak,
    peakDelayMs: 100,
  }));
}

const steady = (count: number) => Array.from({ length: count }, () => [100, 0] as const);
const down = (count: number) => Array.from({ length: count }, () => [0, 400] as const);
const quiet = (count: number) => Array.from({ length: count }, () => [10, 10] as const);

describe("verdict", () => {
  it("recovering, not collapsed: the server is back within seconds while the clients are still in their backoff waits", () => {
    // ./sim -outage-at 15s -outage 20s -duration 95s -seed 7 -exponential-backoff: server
    // back 3 s after the resume, the clients' OK rate still short of 90 % at 95 s.
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 95_000 };
    const server = [
      ...reports(
        1_000,
        Array.from({ length: 14 }, () => [8, 12] as const),
      ),
      ...reports(35_000, [[0, 0], [1049, 1049], [400, 1049], [9, 400], ...Array.from({ length: 57 }, () => [8, 14] as const)]),
    ];
    const client = fiveSecondWindows([...steady(3), ...down(4), ...Array.from({ length: 12 }, () => [56, 12] as const)]);
    const judgement = judge({ server, client, phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
    expect(judgement).toEqual({
      verdict: "recovering",
      serverBackMs: 3_000,
      clientsBackMs: undefined,
      why: "server back under its limit of 30 3.0 s after resume; clients not back at 90 % OK by the end, 60.0 s after resume",
    });
  });

  it("too short, not collapsed: the run ended during the outage, with no report after a resume that never came", () => {
    // ./sim -quiet -duration 30s -clients 100: the outage runs from 15 s to 35 s.
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 30_000 };
    const server = reports(
      1_000,
      Array.from({ length: 14 }, () => [1, 2] as const),
    );
    const client = fiveSecondWindows([...steady(3), ...down(3)]);
    const judgement = judge({ server, client, phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
    expect(judgement.verdict).toBe("too-short");
    expect(judgement.serverBackMs).toBeUndefined();
    expect(judgement.why).toBe("the run ended at 30.0 s, before the resume at 35.0 s: nothing to judge");
    const beforeOutage = judge({
      server,
      client,
      phases: { stopAtMs: 60_000, resumeAtMs: 80_000, endMs: 30_000 },
      concurrencyLimit: 30,
      baselineOkPerSec: 100,
    });
    expect(beforeOutage.why).toBe("the run ended at 30.0 s, before the outage at 60.0 s: nothing to judge");
  });

  it("too short when the server has not reported since the resume", () => {
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 35_500 };
    const judgement = judge({ server: reports(1_000, [[1, 1]]), client: [], phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
    expect(judgement.verdict).toBe("too-short");
  });

  it("recovered when both came back, with each time reported separately", () => {
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 70_000 };
    const server = reports(35_000, [[0, 0], [900, 900], [31, 900], [20, 31], ...Array.from({ length: 32 }, () => [10, 12] as const)]);
    const client = fiveSecondWindows([...steady(3), ...down(4), [40, 50], [95, 4], [91, 0], [100, 0], [100, 0], [100, 0], [100, 0]]);
    const judgement = judge({ server, client, phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
    // Server: the report at +3 s ends at 20 with its interval's peak of 31 above the limit:
    // the drop happened in that interval. Clients: the windows ending at 45 s and 50 s.
    expect(judgement).toMatchObject({ verdict: "recovered", serverBackMs: 3_000, clientsBackMs: 10_000 });
    expect(judgement.why).toBe("server back under its limit of 30 3.0 s after resume; clients back at 90 % OK 10.0 s after resume");
  });

  it("collapsed only when the server is still above its limit at its last report", () => {
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 40_000 };
    const server = reports(35_000, [
      [0, 0],
      [4900, 4900],
      [5400, 5400],
      [20, 5400],
      [7500, 7500],
      [7551, 7600],
    ]);
    const judgement = judge({ server, client: fiveSecondWindows(quiet(8)), phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
    expect(judgement).toMatchObject({ verdict: "collapsed", serverBackMs: undefined, clientsBackMs: undefined });
    expect(judgement.why).toBe(
      "server still above its limit of 30 at its last report, 5.0 s after resume, with 7551 requests in service: a metastable failure",
    );
    // The same reports ending under the limit (a dip to 20 within an interval, then 25): back.
    const back = judge({
      server: [...server.slice(0, 5), ...reports(40_000, [[25, 7600]])],
      client: [],
      phases,
      concurrencyLimit: 30,
      baselineOkPerSec: 100,
    });
    expect(back).toMatchObject({ verdict: "recovering", serverBackMs: 5_000 });
  });

  it("collapsed when the server ran out of memory, before or after the outage", () => {
    const phases: Phases = { stopAtMs: 60_000, resumeAtMs: 80_000, endMs: 2_900 };
    const early = judge({
      server: [],
      client: [],
      phases,
      concurrencyLimit: 30,
      baselineOkPerSec: 0,
      outOfMemory: { atMs: 2_900, inService: 800_000 },
    });
    expect(early.verdict).toBe("collapsed");
    expect(early.why).toBe(
      "server ran out of memory with 800000 requests in service at 2.9 s, before the outage: overloaded without one; a real server crashes there",
    );
    const late = judge({
      server: reports(80_000, [
        [0, 0],
        [10, 12],
      ]),
      client: [],
      phases: { ...phases, endMs: 82_300 },
      concurrencyLimit: 30,
      baselineOkPerSec: 100,
      outOfMemory: { atMs: 82_300, inService: 800_000 },
    });
    expect(late).toMatchObject({ verdict: "collapsed", serverBackMs: undefined, clientsBackMs: undefined });
    expect(late.why).toBe("server ran out of memory with 800000 requests in service 2.3 s after resume; a real server crashes there");
  });

  it("says when the clients cannot be judged for want of a baseline", () => {
    const phases: Phases = { stopAtMs: 0, resumeAtMs: 20_000, endMs: 60_000 };
    const judgement = judge({
      server: reports(20_000, [
        [0, 0],
        [5, 40],
      ]),
      client: fiveSecondWindows(quiet(12)),
      phases,
      concurrencyLimit: 30,
      baselineOkPerSec: 0,
    });
    expect(judgement.verdict).toBe("recovering");
    expect(judgement.why).toBe(
      "server back under its limit of 30 1.0 s after resume; clients not judged: no client window before the outage gives a baseline",
    );
  });

  it("defines server back and clients back at report and window resolution", () => {
    expect(serverBackMs(reports(35_000, [[10, 10]]), 35_000, 30)).toBe(0);
    expect(
      serverBackMs(
        reports(35_000, [
          [10, 10],
          [31, 31],
        ]),
        35_000,
        30,
      ),
    ).toBeUndefined();
    expect(serverBackMs(reports(35_000, [[30, 30]]), 35_000, 30)).toBe(0); // at the limit counts as back
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 95_000 };
    // One good window is not enough; errors + timeouts above 5 % of the baseline spoil a window.
    expect(clientsBackMs(fiveSecondWindows([...steady(7), [95, 0], [95, 6], [95, 5], [90, 0]]), phases, 100)).toBe(15_000);
    expect(clientsBackMs(fiveSecondWindows([...steady(7), [95, 0], [89, 0], [95, 0]]), phases, 100)).toBeUndefined();
    expect(clientsBackMs(fiveSecondWindows([...steady(12)]), phases, 0)).toBeUndefined();
    expect(Object.keys(VERDICT_DEFINITIONS).sort()).toEqual(["collapsed", "invalid", "recovered", "recovering", "too-short"]);
  });

  describe("invalid: a window the verdict depends on in which the client fell behind", () => {
    const phases: Phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 95_000 };
    const server = [
      ...reports(
        1_000,
        Array.from({ length: 14 }, () => [8, 12] as const),
      ),
      ...reports(35_000, [
        [500, 900],
        [400, 500],
      ]),
    ];
    const collapsedClient = fiveSecondWindows([...steady(3), ...down(16)]);
    const marking = (
      client: ClientWindow[],
      index: number,
      reason = "attempts sent late: lateness p99 1900 ms (max 7300 ms) above 200 ms",
    ) => client.map((window, at) => (at === index ? { ...window, behind: reason } : window));

    it("wins over collapsed, names the window and the figure", () => {
      expect(judge({ server, client: collapsedClient, phases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict).toBe("collapsed");
      const judgement = judge({ server, client: marking(collapsedClient, 8), phases, concurrencyLimit: 30, baselineOkPerSec: 100 });
      expect(judgement.verdict).toBe("invalid");
      expect(judgement.why).toBe(
        "the client could not keep up in the window 40.0 s to 45.0 s (1 window(s) marked from the outage on): " +
          "attempts sent late: lateness p99 1900 ms (max 7300 ms) above 200 ms; nothing about the server can be read from them",
      );
    });

    it("wins over recovered, from the outage's start to the end", () => {
      const recoveredServer = [
        ...reports(
          1_000,
          Array.from({ length: 14 }, () => [8, 12] as const),
        ),
        ...reports(35_000, [
          [5, 40],
          [5, 5],
        ]),
      ];
      const client = fiveSecondWindows([...steady(3), ...down(4), ...steady(12)]);
      expect(judge({ server: recoveredServer, client, phases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict).toBe("recovered");
      // The window of the outage's start (15 s to 20 s) counts: the load offered during the outage is part of the result.
      expect(
        judge({ server: recoveredServer, client: marking(client, 3), phases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict,
      ).toBe("invalid");
      expect(
        judge({ server: recoveredServer, client: marking(client, 18), phases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict,
      ).toBe("invalid");
    });

    it("does not count a marked window before the outage, nor one after the end", () => {
      const client = fiveSecondWindows([...steady(3), ...down(16)]);
      expect(judge({ server, client: marking(client, 1), phases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict).toBe("collapsed");
      const shortPhases: Phases = { ...phases, endMs: 60_000 };
      expect(judge({ server, client: marking(client, 14), phases: shortPhases, concurrencyLimit: 30, baselineOkPerSec: 100 }).verdict).toBe(
        "collapsed",
      );
    });
  });
});

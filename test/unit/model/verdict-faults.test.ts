import { describe, expect, it } from "vitest";
import type { Fault } from "../../../src/model/faults/fault-schedule.ts";
import { durationText } from "../../../src/model/seconds.ts";
import type { ClientWindow, Phases, ServerSample } from "../../../src/model/timeline.ts";
import { judge, stillFailing } from "../../../src/model/verdict.ts";

/*
 * The verdict of runs whose trouble is a fault schedule rather than the one stop, on
 * hand-built timelines: the reference point is the end of the last fault, the reason names
 * the faults, and the queue model's state is quoted where the samples have it.
 */

/** One-second reports from `startMs`, each [requests in the server, queue waiting]. */
function queueReports(startMs: number, values: readonly (readonly [number, number])[]): ServerSample[] {
  return values.map(([concurrency, queue], index) => ({
    atMs: startMs + index * 1_000,
    concurrency,
    lastDelayMs: 20,
    peakConcurrency: concurrency,
    peakDelayMs: 20,
    queueLength: queue,
    threadsBusy: Math.min(8, concurrency),
  }));
}

/** Five-second client windows from 0, each [ok, errors, timed out] per second. */
function windows(values: readonly (readonly [number, number, number])[]): ClientWindow[] {
  return values.map(([ok, errors, timedout], index) => ({
    startMs: index * 5_000,
    endMs: (index + 1) * 5_000,
    okPerSec: ok,
    errorsPerSec: errors,
    timedoutPerSec: timedout,
    attemptsPerSec: ok + errors + timedout,
  }));
}

const repeat = <T>(count: number, value: T): T[] => Array.from({ length: count }, () => value);
const capacityCut: Fault = { kind: "capacity", atMs: 60_000, durationMs: 30_000, factor: 0.4 };
const spike: Fault = { kind: "spike", atMs: 20_000, durationMs: 5_000, factor: 2 };
// From the first fault's start to the last one's end, as the simulator's phasesOf gives them.
const phases: Phases = { stopAtMs: 20_000, resumeAtMs: 90_000, endMs: 150_000, faults: [spike, capacityCut] };

describe("verdict after a fault schedule", () => {
  it("collapsed while the queue model is still over its line after the last fault ended, naming the faults and the queue", () => {
    const server = [...queueReports(1_000, repeat(19, [3, 0] as const)), ...queueReports(90_000, repeat(61, [2408, 2400] as const))];
    const client = windows([...repeat(4, [100, 0, 0] as const), ...repeat(26, [5, 0, 300] as const)]);
    const judgement = judge({ server, client, phases, concurrencyLimit: 16, baselineOkPerSec: 100 });
    expect(judgement).toMatchObject({ verdict: "collapsed", serverBackMs: undefined, clientsBackMs: undefined });
    expect(judgement.why).toBe(
      "after spike@20s+5s*2, capacity@1m0s+30s*0.4 had all ended at 1m30s: server still above its limit of 16 at its last report, " +
        "60.0 s after that, with 2408 requests in service (queue 2400, threads busy 8): a metastable failure",
    );
  });

  it("recovered when the server and the clients are back after the last fault, however bad it was during the first", () => {
    const server = [
      ...queueReports(1_000, repeat(19, [3, 0] as const)),
      ...queueReports(20_000, repeat(10, [900, 892] as const)),
      ...queueReports(90_000, [[400, 392], [50, 42], ...repeat(59, [3, 0] as const)]),
    ];
    const client = windows([
      ...repeat(4, [100, 0, 0] as const),
      ...repeat(14, [20, 0, 200] as const),
      [60, 0, 40],
      ...repeat(11, [99, 0, 1] as const),
    ]);
    const judgement = judge({ server, client, phases, concurrencyLimit: 16, baselineOkPerSec: 100 });
    expect(judgement).toMatchObject({ verdict: "recovered", serverBackMs: 2_000, clientsBackMs: 10_000 });
    expect(judgement.why).toBe(
      "after spike@20s+5s*2, capacity@1m0s+30s*0.4 had all ended at 1m30s: server back under its limit of 16 2.0 s after that; " +
        "clients back at 90 % OK 10.0 s after that",
    );
  });

  it("collapsed when the server is under its line but the clients still fail at the end (a server shedding a storm)", () => {
    const errorsFault: Fault = { kind: "errors", atMs: 20_000, durationMs: 10_000, factor: 0.5 };
    const errorPhases: Phases = { stopAtMs: 20_000, resumeAtMs: 30_000, endMs: 90_000, faults: [errorsFault] };
    const server = queueReports(1_000, repeat(89, [8, 0] as const));
    const shedding = windows([...repeat(4, [100, 0, 0] as const), ...repeat(14, [30, 400, 0] as const)]);
    const judgement = judge({ server, client: shedding, phases: errorPhases, concurrencyLimit: 16, baselineOkPerSec: 100 });
    expect(judgement.verdict).toBe("collapsed");
    expect(judgement.why).toBe(
      "after errors@20s+10s*0.5 ended at 30s: server back under its limit of 16 0.0 s after that, but the clients were still failing " +
        "at the end: 30.0 OK/s and 400.0 errors + timeouts/s in the last window, against a baseline of 100.0 OK/s: a metastable failure",
    );
    // Clients away in their backoff, failing little: not failing, recovering.
    const away = windows([...repeat(4, [100, 0, 0] as const), ...repeat(14, [50, 0, 20] as const)]);
    expect(judge({ server, client: away, phases: errorPhases, concurrencyLimit: 16, baselineOkPerSec: 100 }).verdict).toBe("recovering");
    // Only the last window failing is not enough: two in a row, as for coming back.
    const lastOnly = windows([...repeat(4, [100, 0, 0] as const), ...repeat(13, [50, 0, 20] as const), [0, 0, 300]]);
    expect(stillFailing(lastOnly, errorPhases, 100)).toBeUndefined();
    expect(stillFailing(shedding, errorPhases, 100)).toEqual(shedding.at(-1));
  });

  it("names the faults on the schedule's clock when the timeline starts earlier (the demo's: its server starts before its clients)", () => {
    // The demo's timeline counts from its server's start; its clients, and the schedule errors@20s+10s, started 2.25 s later.
    const errorsFault: Fault = { kind: "errors", atMs: 22_250, durationMs: 10_000, factor: 0.5 };
    const demoPhases: Phases = { stopAtMs: 22_250, resumeAtMs: 32_250, endMs: 92_250, faults: [errorsFault], runStartMs: 2_250 };
    const server = queueReports(1_000, repeat(91, [8, 0] as const));
    const shedding = windows([...repeat(4, [100, 0, 0] as const), ...repeat(14, [30, 400, 0] as const)]);
    const judgement = judge({ server, client: shedding, phases: demoPhases, concurrencyLimit: 16, baselineOkPerSec: 100 });
    expect(judgement.why).toMatch(/^after errors@20s\+10s\*0\.5 ended at 30s: /);
  });

  it("speaks of the resume, as before, when the one fault is a stop", () => {
    const stop: Phases = {
      stopAtMs: 15_000,
      resumeAtMs: 35_000,
      endMs: 50_000,
      faults: [{ kind: "stop", atMs: 15_000, durationMs: 20_000, factor: 1 }],
    };
    const server = queueReports(35_000, repeat(15, [3, 0] as const));
    const judgement = judge({ server, client: [], phases: stop, concurrencyLimit: 16, baselineOkPerSec: 0 });
    expect(judgement.why).toBe(
      "server back under its limit of 16 0.0 s after resume; clients not judged: no client window before the outage gives a baseline",
    );
  });

  it("too short when the run ended before the last fault did", () => {
    const judgement = judge({ server: [], client: [], phases: { ...phases, endMs: 80_000 }, concurrencyLimit: 16, baselineOkPerSec: 100 });
    expect(judgement.why).toBe("the run ended at 80.0 s, before the last fault ended at 90.0 s: nothing to judge");
  });

  it("writes durations as a schedule does", () => {
    expect([250, 15_000, 1_500, 90_000, 60_000].map(durationText)).toEqual(["250ms", "15s", "1.5s", "1m30s", "1m0s"]);
  });
});

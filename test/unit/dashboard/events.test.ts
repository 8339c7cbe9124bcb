import { describe, expect, it } from "vitest";
import { clientEvent, faultEvent, phaseEvents, serverEvent } from "../../../src/dashboard/events.ts";

describe("dashboard events", () => {
  it("gives times in seconds and an infinite delay as null", () => {
    expect(serverEvent(1, { atMs: 2_500, concurrency: 40, lastDelayMs: 150, peakConcurrency: 41, peakDelayMs: 160 })).toEqual({
      kind: "server",
      run: 1,
      atS: 2.5,
      concurrency: 40,
      delayS: 0.15,
    });
    expect(
      serverEvent(0, { atMs: 0, concurrency: 9_000, lastDelayMs: Infinity, peakConcurrency: 9_000, peakDelayMs: Infinity }),
    ).toMatchObject({
      delayS: null,
    });
  });

  it("passes the throttled rate on only where the client reports one", () => {
    const window = { startMs: 0, endMs: 5_000, okPerSec: 90, errorsPerSec: 1, timedoutPerSec: 2, attemptsPerSec: 95 };
    expect(clientEvent(0, window)).not.toHaveProperty("throttledPerSec");
    expect(clientEvent(0, { ...window, throttledPerSec: 3 })).toMatchObject({ atS: 5, okPerSec: 90, throttledPerSec: 3 });
  });

  it("names the phases of a run with two outages", () => {
    const phases = phaseEvents(2, 500, [
      { atMs: 15_000, durationMs: 20_000 },
      { atMs: 60_000, durationMs: 5_000 },
    ]);
    expect(phases.map((event) => (event.kind === "phase" ? `${event.phase}@${event.atS}` : event.kind))).toEqual([
      "steady@0.5",
      "outage@15",
      "observe@35",
      "outage@60",
      "observe@65",
    ]);
  });

  it("marks a fault by kind with its band, factor and colour (a crash silences the server), and passes the queue model's state on", () => {
    expect(faultEvent(1, { kind: "capacity", atMs: 20_000, durationMs: 5_000, factor: 0.5 })).toEqual({
      kind: "fault",
      run: 1,
      fault: "capacity",
      fromS: 20,
      toS: 25,
      label: "capacity ×0.5",
      fill: "rgba(255, 127, 14, 0.15)",
      silencesServer: false,
    });
    expect(faultEvent(0, { kind: "crash", atMs: 1_000, durationMs: 2_000, factor: 1 })).toMatchObject({
      label: "crash",
      silencesServer: true,
    });
    const sample = { atMs: 1_000, concurrency: 12, lastDelayMs: 40, peakConcurrency: 12, peakDelayMs: 40 };
    expect(serverEvent(0, { ...sample, queueLength: 4, threadsBusy: 8, threads: 8 })).toMatchObject({
      queueLength: 4,
      threadsBusy: 8,
      threads: 8,
    });
    expect(serverEvent(0, sample)).not.toHaveProperty("queueLength");
  });
});

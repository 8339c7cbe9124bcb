import { describe, expect, it } from "vitest";
import { computeMetrics } from "../../../src/model/scenario-metrics.ts";
import type { ClientWindow, ServerSample } from "../../../src/model/timeline.ts";

const phases = { stopAtMs: 15_000, resumeAtMs: 35_000, endMs: 95_000 };

/** Five-second client windows from `rates`, each [ok, errors, timedout, attempts]. */
function windows(rates: [number, number, number, number][]): ClientWindow[] {
  return rates.map(([okPerSec, errorsPerSec, timedoutPerSec, attemptsPerSec], index) => ({
    startMs: index * 5_000,
    endMs: (index + 1) * 5_000,
    okPerSec,
    errorsPerSec,
    timedoutPerSec,
    attemptsPerSec,
  }));
}

const delay = (concurrency: number) => (concurrency > 30 ? 100 * 1.05 ** ((concurrency - 30) / 15) : 100);
const samples = (concurrencies: number[], startMs: number): ServerSample[] =>
  concurrencies.map((concurrency, index) => ({
    atMs: startMs + index * 1_000,
    concurrency,
    lastDelayMs: delay(concurrency),
    peakConcurrency: concurrency,
    peakDelayMs: delay(concurrency),
  }));

const steady: [number, number, number, number][] = [
  [80, 0, 0, 80],
  [100, 0, 0, 100],
  [100, 0, 0, 100],
];
const outage: [number, number, number, number][] = [
  [0, 0, 200, 300],
  [0, 0, 300, 400],
  [0, 0, 380, 500],
  [0, 0, 400, 600],
];

describe("computeMetrics", () => {
  it("measures a recovery: baseline, amplification, peaks, and both recovery times", () => {
    const client = windows([
      ...steady,
      ...outage,
      [20, 0, 10, 40],
      [60, 0, 2, 70],
      [95, 0, 6, 100],
      [92, 0, 0, 95],
      [99, 0, 0, 99],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
      [100, 0, 0, 100],
    ]);
    const server = [...samples([10, 9, 11], 12_000), ...samples([0, 900, 400, 120, 31, 25, 10, 12, 8, ...Array(51).fill(10)], 35_000)];
    const metrics = computeMetrics(server, client, phases, 30);
    expect(metrics.baselineOkPerSec).toBe(100); // the first (warm-up) window is left out
    expect(metrics.outageAmplification).toBe(4.5);
    expect(metrics.peakAmplification).toBe(6);
    expect(metrics.peakConcurrencyAfterResume).toBe(900);
    expect(metrics.peakDelayAfterResumeMs).toBeCloseTo(100 * 1.05 ** (870 / 15), 6);
    expect(metrics.serverRecoveryMs).toBe(5_000); // concurrency stays <= 30 from the sample at +5 s
    // Windows ending at 50 s (95 OK, but 6 failing > 5 %: not good), 55 s (92, 0: good), 60 s (99, 0: good).
    expect(metrics.clientRecoveryMs).toBe(20_000);
    expect(metrics.verdict).toBe("recovered");
    expect(metrics.why).toBe("server back under its limit of 30 5.0 s after resume; clients back at 90 % OK 20.0 s after resume");
  });

  it("calls a run collapsed when concurrency is still above the limit at the end", () => {
    const client = windows([...steady, ...outage, ...Array(12).fill([0, 0, 480, 480])]);
    const server = samples(
      [
        0,
        1040,
        1599,
        1925,
        2231,
        ...Array(55)
          .fill(0)
          .map((_, index) => 2300 + index * 100),
      ],
      35_000,
    );
    const metrics = computeMetrics(server, client, phases, 30);
    expect(metrics.serverRecoveryMs).toBeUndefined();
    expect(metrics.clientRecoveryMs).toBeUndefined();
    expect(metrics.peakConcurrencyAfterResume).toBe(2300 + 54 * 100);
    expect(metrics.verdict).toBe("collapsed");
  });

  it("calls a server back under the limit with clients still failing recovering, not collapsed", () => {
    const client = windows([...steady, ...outage, ...Array(12).fill([50, 0, 20, 70])]);
    const server = samples(Array(60).fill(10), 35_000);
    const metrics = computeMetrics(server, client, phases, 30);
    expect(metrics.serverRecoveryMs).toBe(0);
    expect(metrics.clientRecoveryMs).toBeUndefined();
    expect(metrics.verdict).toBe("recovering");
    expect(metrics.why).toBe(
      "server back under its limit of 30 0.0 s after resume; clients not back at 90 % OK by the end, 60.0 s after resume",
    );
  });

  it("counts a burst that drained between two reports in the peaks", () => {
    // Stale requests enter service on resume and leave within a second: the instantaneous
    // samples show 0 and 12, the interval's peak shows the 250.
    const server: ServerSample[] = [
      { atMs: 35_000, concurrency: 0, lastDelayMs: 100, peakConcurrency: 0, peakDelayMs: 100 },
      { atMs: 36_000, concurrency: 12, lastDelayMs: 100, peakConcurrency: 250, peakDelayMs: delay(250) },
      { atMs: 37_000, concurrency: 10, lastDelayMs: 100, peakConcurrency: 14, peakDelayMs: 100 },
    ];
    const metrics = computeMetrics(server, windows(steady), phases, 30);
    expect(metrics.peakConcurrencyAfterResume).toBe(250);
    expect(metrics.peakDelayAfterResumeMs).toBe(delay(250));
    expect(metrics.serverRecoveryMs).toBe(1_000); // below the limit again by the report at +1 s
  });

  it("treats an infinite delay as the peak without producing NaN", () => {
    const server: ServerSample[] = [
      { atMs: 36_000, concurrency: 300_000, lastDelayMs: Infinity, peakConcurrency: 300_000, peakDelayMs: Infinity },
    ];
    const metrics = computeMetrics(server, windows(steady), phases, 30);
    expect(metrics.peakDelayAfterResumeMs).toBe(Infinity);
    expect(metrics.outageAmplification).toBe(0);
  });

  it("counts the work done for nobody from the last sample's totals, and beside it the work dropped once nobody waited", () => {
    const base = { concurrency: 10, lastDelayMs: 100, peakConcurrency: 10, peakDelayMs: 100 };
    const server: ServerSample[] = [
      { atMs: 36_000, ...base, abandoned: 400, abandonedInService: 900, cancelled: 0, expired: 3 },
      { atMs: 37_000, ...base, abandoned: 4_100, abandonedInService: 7, cancelled: 5, expired: 25 },
    ];
    expect(computeMetrics(server, windows(steady), phases, 30).wastedWork).toEqual({
      completedForNobody: 4_100,
      heldForNobody: 7,
      total: 4_107,
      droppedForNobody: 30,
    });
    // Samples without totals (an older server's JSON) give no figure rather than a false 0.
    expect(computeMetrics(samples([10, 10], 36_000), windows(steady), phases, 30).wastedWork).toBeUndefined();
  });
});

describe("readableDelay", () => {
  it("uses Go notation up to a year and years beyond", async () => {
    const { readableDelay } = await import("../../../src/report/report.ts");
    expect(readableDelay(2_611.306)).toBe("2.611306s");
    expect(readableDelay(3_600_000 * 24 * 364)).toBe("8736h0m0s");
    expect(readableDelay(1e13)).toBe("317 years");
    expect(readableDelay(5.2e63)).toBe("1.65e+53 years");
    expect(readableDelay(Infinity)).toBe("forever");
  });
});

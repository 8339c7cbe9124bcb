import { describe, expect, it } from "vitest";
import { chainFigures } from "../../../src/runtime/chain-figures.ts";

/*
 * A real chain's figures from its programs' lines: arrivals at a tier are the attempts of the
 * one above it (the users' for the edge), a crashed tier's incarnations add up, and the users'
 * requests are read at each tier's own instants.
 */

const START = 1_000_000;

/** A client window ending `atS` seconds after START, with these counts. */
function clientLine(atS: number, counts: { attempts: number; retries: number; ok: number; gaveUp: number }): string {
  const rates = { okPerSec: 0, errorsPerSec: 0, timedoutPerSec: 0, gaveUpPerSec: 0, attemptsPerSec: 0, retriesPerSec: 0 };
  return JSON.stringify({
    time: "t",
    epochMs: START + atS * 1000,
    windowMs: 1000,
    errors: 0,
    timedout: 0,
    throttled: 0,
    rejected: 0,
    ...counts,
    ...rates,
    throttledPerSec: 0,
    rejectedPerSec: 0,
    retryShare: 0,
    inFlight: 0,
    errorKinds: {},
    latencyMs: null,
  });
}

/** A server line `atS` seconds after START: its upstream totals (attempts, attemptsOk) and abandoned. */
function serverLine(atS: number, totals: { attempts?: number; attemptsOk?: number; abandoned?: number }): string {
  const { attempts, attemptsOk, abandoned = 0 } = totals;
  const upstream =
    attempts === undefined
      ? {}
      : {
          upstream: {
            requests: 0,
            attempts,
            attemptsOk: attemptsOk ?? 0,
            attemptsError: 0,
            attemptsTimedout: 0,
            refused: 0,
            failures: 0,
            inFlight: 0,
          },
        };
  return JSON.stringify({
    time: "t",
    epochMs: START + atS * 1000,
    concurrency: 0,
    lastDelayMs: 0,
    lastDelay: "0s",
    peakConcurrency: 0,
    peakDelayMs: 0,
    admitted: 0,
    served: 0,
    abandoned,
    abandonedInService: 0,
    cancelled: 0,
    shed: 0,
    expired: 0,
    errorsInjected: 0,
    ...upstream,
  });
}

describe("chainFigures", () => {
  it("counts each tier at its door, adds a crashed tier's incarnations, and reads the users' requests at each tier's instants", () => {
    // The users: 10 requests a second for 4 s, each made of 2 attempts, half of them OK.
    const clientLines = [1, 2, 3, 4].map((atS) => clientLine(atS, { attempts: 20, retries: 10, ok: 5, gaveUp: 5 }));
    const figures = chainFigures({
      startEpochMs: START,
      runStartMs: 0,
      clientLines,
      tiers: [
        // The edge sends 60 attempts a second to the api; it crashed after 2 s, its counts starting again at 0.
        {
          name: "edge",
          incarnationLines: [
            [serverLine(1, { attempts: 60, attemptsOk: 5 }), serverLine(2, { attempts: 120, attemptsOk: 10, abandoned: 3 })],
            [serverLine(3, { attempts: 60, attemptsOk: 5 }), serverLine(4, { attempts: 120, attemptsOk: 10, abandoned: 1 })],
          ],
          pids: [1, 2],
        },
        { name: "api", incarnationLines: [[serverLine(4, { abandoned: 7 })]], pids: [3] },
      ],
      policyAmplification: [2, 6],
      normalUntilMs: 2000,
      troubleUntilMs: 4000,
      faults: [{ kind: "crash", tier: "edge", atMs: 2000, durationMs: 500, factor: 1 }],
    });
    expect(figures.users).toEqual({ requests: 40, ok: 20, gaveUp: 20, attempts: 80 });
    const [edge, api] = figures.tiers;
    expect(edge).toMatchObject({ name: "edge", arrivals: 80, amplification: 2, policyAmplification: 2, workForNobody: 4 });
    expect(edge!.goodputPerSec).toBe(5);
    expect(api).toMatchObject({ name: "api", arrivals: 240, amplification: 6, faultAmplification: 6, policyAmplification: 6 });
    expect(api).toMatchObject({ normalArrivalsPerSec: 60, peakArrivalsPerSec: 60, peakLoad: 1, goodputPerSec: 5, workForNobody: 7 });
    expect(figures.series.map((tier) => tier.points.map((point) => point.arrivalsPerSec))).toEqual([
      [20, 20, 20, 20],
      [60, 60, 60, 60],
    ]);
    expect(figures.firstCollapsed).toBeNull();
    expect(figures.firstCollapsedText).toMatch(/^no tier collapsed/);
  });

  it("counts a spike's extra client with the users: its attempts reach the edge, its requests are users' requests, as the simulator counts them", () => {
    // The users: 10 one-attempt requests a second for 4 s; a spike client adds 30 a second in the third second only.
    const clientLines = [1, 2, 3, 4].map((atS) => clientLine(atS, { attempts: 10, retries: 0, ok: 10, gaveUp: 0 }));
    const spikeLines = [clientLine(3, { attempts: 30, retries: 10, ok: 20, gaveUp: 0 })];
    const input = {
      startEpochMs: START,
      runStartMs: 0,
      clientLines,
      tiers: [{ name: "edge", incarnationLines: [[1, 2, 3, 4].map((atS) => serverLine(atS, {}))], pids: [1] }],
      policyAmplification: [1],
      normalUntilMs: 2000,
      troubleUntilMs: 3000,
      faults: [{ kind: "spike" as const, atMs: 2000, durationMs: 1000, factor: 4 }],
    };
    const figures = chainFigures({ ...input, spikeClientLines: [spikeLines] });
    expect(figures.users).toEqual({ requests: 60, ok: 60, gaveUp: 0, attempts: 70 });
    expect(figures.tiers[0]).toMatchObject({ arrivals: 70, normalArrivalsPerSec: 10, peakArrivalsPerSec: 40, peakLoad: 4 });
    expect(figures.series[0]!.points.map((point) => point.arrivalsPerSec)).toEqual([10, 10, 40, 10]);
    // Without the spike client's lines the edge would look unloaded.
    expect(chainFigures(input).tiers[0]).toMatchObject({ arrivals: 40, peakArrivalsPerSec: 10 });
  });
});

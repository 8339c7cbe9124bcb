import { describe, expect, it } from "vitest";
import { chainHeadline, chainVerdict } from "../../../../src/model/tiers/chain-verdict.ts";
import type { TierFigures, TierVerdict } from "../../../../src/model/tiers/tier-figures.ts";

function tier(name: string, verdict: TierVerdict, recoveredAtMs: number | null = null): TierFigures {
  return {
    name,
    arrivals: 100,
    amplification: 1,
    faultAmplification: 1,
    policyAmplification: 3,
    normalArrivalsPerSec: 10,
    peakArrivalsPerSec: 20,
    peakLoad: 2,
    goodputPerSec: 10,
    workForNobody: 0,
    collapsedAtMs: verdict === "held" ? null : 5_000,
    recoveredAtMs,
    verdict,
  };
}

const FIRST = "first to collapse: api at 5s (goodput below half its normal), by its own fault api:stop@4s+5s";

describe("a chain's verdict", () => {
  it("is its worst tier's: collapsed, then recovered, then held", () => {
    expect(chainVerdict(["held", "recovered", "held"])).toBe("recovered");
    expect(chainVerdict(["recovered", "collapsed", "held"])).toBe("collapsed");
    expect(chainVerdict(["held", "held"])).toBe("held");
    expect(chainVerdict([])).toBe("held");
  });
});

describe("the demo's headline verdict for a chain", () => {
  // The edge's single-server rules said "recovering" (its clients not back at 90 % by the end), as a measured run did.
  const edge = { verdict: "recovering" as const, why: "server back under its limit of 512 1.0 s after resume; clients not back" };

  it("is recovered when every tier that collapsed came back, whatever the edge alone would say, naming the last one back", () => {
    const headline = chainHeadline(edge, {
      tiers: [tier("edge", "recovered", 12_361), tier("api", "recovered", 12_988), tier("db", "held")],
      firstCollapsedText: FIRST,
    });
    expect(headline).toEqual({ verdict: "recovered", why: `every tier that collapsed came back, the last api at 12.988s; ${FIRST}` });
  });

  it("is collapsed when a tier is still down at the end, even where the edge's own server came back", () => {
    const headline = chainHeadline(edge, {
      tiers: [tier("edge", "collapsed"), tier("api", "collapsed"), tier("db", "recovered", 9_000)],
      firstCollapsedText: FIRST,
    });
    expect(headline).toEqual({ verdict: "collapsed", why: `edge, api still down at the end; ${FIRST}` });
  });

  it("is recovered when no tier collapsed", () => {
    const headline = chainHeadline(
      { verdict: "collapsed", why: "the edge's rule" },
      {
        tiers: [tier("edge", "held"), tier("db", "held")],
        firstCollapsedText: "no tier collapsed",
      },
    );
    expect(headline).toEqual({ verdict: "recovered", why: "no tier collapsed (edge, db held)" });
  });

  it("keeps invalid and too-short: a client that fell behind, or a run too short, judges no tier", () => {
    const tiers = [tier("edge", "collapsed")];
    for (const verdict of ["invalid", "too-short"] as const) {
      const single = { verdict, why: "the single-server reason" };
      expect(chainHeadline(single, { tiers, firstCollapsedText: FIRST })).toBe(single);
    }
  });
});

import { describe, expect, it } from "vitest";
import { policyAmplification } from "../../../../src/model/tiers/amplification.ts";
import { firstCollapsed, type TierSample, tierFigures } from "../../../../src/model/tiers/tier-figures.ts";

/** Samples every second from per-second arrivals and OK answers, with 10 user requests a second. */
function samples(arrivals: readonly number[], ok: readonly number[]): TierSample[] {
  let [a, o] = [0, 0];
  return arrivals.map((count, index) => {
    a += count;
    o += ok[index]!;
    return { endMs: (index + 1) * 1000, arrivals: a, okAnswers: o, userRequests: 10 * (index + 1) };
  });
}

/** A tier's figures with only its collapse set. */
const at = (name: string, collapsedAtMs: number | null) => ({
  ...tierFigures({ name, samples: [], workForNobody: 0, policyAmplification: 1 }, 0, 0, 0),
  collapsedAtMs,
});

describe("a tier's figures", () => {
  it("computes the policies' amplification: the product of the attempts and fan-outs above, no limit as Infinity", () => {
    expect(
      policyAmplification(3, [
        { maxAttempts: 3, fanout: 1 },
        { maxAttempts: 3, fanout: 2 },
      ]),
    ).toEqual([3, 9, 54]);
    expect(policyAmplification(Infinity, [{ maxAttempts: 2, fanout: 1 }])).toEqual([Infinity, Infinity]);
  });

  it("measures amplification, load against normal, goodput, and when it collapsed and came back", () => {
    // Normal for 2 s (10/s, all OK), a fault from 2 s to 4 s (40/s, none OK), then back.
    const figures = tierFigures(
      { name: "db", samples: samples([10, 10, 40, 40, 10, 10], [10, 10, 0, 0, 6, 10]), workForNobody: 7, policyAmplification: 27 },
      60,
      2000,
      4000,
    );
    expect(figures).toEqual({
      name: "db",
      arrivals: 120,
      amplification: 2,
      faultAmplification: 4,
      policyAmplification: 27,
      normalArrivalsPerSec: 10,
      peakArrivalsPerSec: 40,
      peakLoad: 4,
      goodputPerSec: 6,
      workForNobody: 7,
      collapsedAtMs: 3000,
      recoveredAtMs: 6000,
      verdict: "recovered",
    });
  });

  it("has no normal, peak load or collapse without a window before the first fault, and no fault figure without faults", () => {
    const figures = tierFigures(
      { name: "edge", samples: samples([5, 5], [0, 0]), workForNobody: 0, policyAmplification: Infinity },
      20,
      0,
      2000,
    );
    expect(figures).toMatchObject({
      normalArrivalsPerSec: null,
      peakLoad: null,
      collapsedAtMs: null,
      policyAmplification: null,
      verdict: "held",
    });
    const quiet = tierFigures({ name: "edge", samples: samples([5, 5], [5, 5]), workForNobody: 0, policyAmplification: 3 }, 20, 2000, 0);
    expect(quiet.faultAmplification).toBeNull();
  });

  it("names the tier that collapsed first, the deepest one when several collapsed in the same window", () => {
    expect(firstCollapsed([at("edge", 5000), at("api", 3000), at("db", 3000)])?.name).toBe("db");
    expect(firstCollapsed([at("edge", 2000), at("api", 3000), at("db", null)])?.name).toBe("edge");
    expect(firstCollapsed([at("edge", null)])).toBeUndefined();
  });

  it("in a real chain, counts collapses less than a window apart as the same window: the deepest tier, not the one whose caller printed first", () => {
    // Measured on a real chain, db crashed: each tier's windows end at its caller's instants.
    const tiers = [at("edge", 5214), at("api", 4676), at("db", 5389)];
    expect(firstCollapsed(tiers)?.name).toBe("api");
    expect(firstCollapsed(tiers, 1000)?.name).toBe("db");
    // A window apart or more: the earlier one.
    expect(firstCollapsed([at("edge", 4000), at("api", 5000), at("db", 6200)], 1000)?.name).toBe("edge");
  });

  it("does not call collapsed a tier its caller stopped calling, nor one answering a burst in the window after it", () => {
    // The db below a stopped api: its arrivals and answers fall together (everything that arrives is answered).
    const starved = {
      name: "db",
      samples: samples([10, 10, 1, 0, 0, 10, 10], [10, 10, 1, 0, 0, 10, 10]),
      workForNobody: 0,
      policyAmplification: 27,
    };
    expect(tierFigures(starved, 70, 2000, 5000)).toMatchObject({ verdict: "held", collapsedAtMs: null });
    // The api resumed at the end of a window: its burst arrives in it, the answers in the next.
    const burst = {
      name: "db",
      samples: samples([10, 10, 0, 40, 10, 10], [10, 10, 0, 0, 50, 10]),
      workForNobody: 0,
      policyAmplification: 27,
    };
    expect(tierFigures(burst, 60, 2000, 4000)).toMatchObject({ verdict: "held", collapsedAtMs: null });
    // The tier that was stopped: fewer arrivals (its callers' threads wait on it), none answered.
    const stopped = {
      name: "api",
      samples: samples([10, 10, 3, 3, 10, 10], [10, 10, 0, 0, 10, 10]),
      workForNobody: 0,
      policyAmplification: 9,
    };
    expect(tierFigures(stopped, 60, 2000, 4000)).toMatchObject({ verdict: "recovered", collapsedAtMs: 3000, recoveredAtMs: 5000 });
  });

  it("leaves the windows after the users' end out of the peak and the verdict: a tier nobody calls any more has not collapsed", () => {
    // Normal, a fault it rides out, then the users stop at 6 s and the tier finishes its calls, their callers gone: none answered OK.
    const counts = {
      name: "db",
      samples: samples([10, 10, 12, 12, 10, 10, 5], [10, 10, 10, 10, 10, 10, 0]),
      workForNobody: 0,
      policyAmplification: 27,
    };
    expect(tierFigures(counts, 60, 2000, 4000).verdict).toBe("collapsed");
    const judged = tierFigures(counts, 60, 2000, 4000, 6000);
    expect(judged).toMatchObject({ verdict: "held", collapsedAtMs: null, arrivals: 69, peakArrivalsPerSec: 12 });
  });
});

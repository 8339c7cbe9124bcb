import { describe, expect, it } from "vitest";
import type { Candidate } from "../../../src/choose/candidates.ts";
import type { Verdict } from "../../../src/model/verdict.ts";
import { compareCandidates, explanation, paretoFront, rank, rankingRule, runnerUp } from "../../../src/choose/ranking.ts";
import type { CandidateSummary } from "../../../src/choose/summary.ts";

const OUTAGES = [5_000, 20_000, 60_000];

interface Made {
  success?: number;
  amplification?: number;
  p99?: number | undefined;
  longest?: number;
  atLeast?: boolean;
  /** One verdict per listed outage. */
  verdicts?: readonly Verdict[];
  clientsBackMs?: number;
}

/** A hand-made summary: only the figures the ranking reads. */
function made(id: string, figures: Made = {}): CandidateSummary {
  const verdicts = figures.verdicts ?? ["recovered", "recovered", "recovered"];
  const candidate: Candidate = { id, family: id, origin: "strategy", summary: id, client: {}, server: {}, lever: "default", clientId: id };
  const outages = verdicts.map((verdict, index) => ({
    outageMs: OUTAGES[index]!,
    verdicts: [verdict],
    verdict,
    survived: verdict !== "collapsed",
    serverRecoveryMs: verdict === "collapsed" ? null : 3_000,
    clientRecoveryMs: verdict === "recovered" ? (figures.clientsBackMs ?? 10_000) : null,
    peakLoad: 1,
    servedForNobody: 0,
  }));
  return {
    candidate,
    seeds: 1,
    everyday: {
      successRate: figures.success ?? 0.999,
      amplification: figures.amplification ?? 1.01,
      p99Ms: "p99" in figures ? figures.p99 : 150,
      requests: 10_000,
    },
    outages,
    longestSurvivedMs: figures.longest ?? 100_000,
    longestIsAtLeast: figures.atLeast ?? false,
    survivesAll: outages.every((outage) => outage.survived),
    listedSurvived: outages.filter((outage) => outage.survived).length,
    simulations: 1,
  };
}

const ids = (summaries: readonly CandidateSummary[]) => summaries.map((summary) => summary.candidate.id);

describe("the ranking rule", () => {
  it("puts every candidate that survives each listed outage before any that does not, whatever its everyday figures", () => {
    const survivor = made("survivor", { success: 0.95, amplification: 1.5 });
    const fragile = made("fragile", { success: 1, amplification: 1, verdicts: ["recovered", "recovered", "collapsed"] });
    expect(ids(rank([fragile, survivor]))).toEqual(["survivor", "fragile"]);
  });

  it("ranks survivors by success, then amplification, then p99, then the longest outage, then the clients' recovery, then id", () => {
    const summaries = [
      made("h-slow-clients", { clientsBackMs: 30_000 }),
      made("a-best-success", { success: 0.9995 }),
      made("b-less-amplification", { amplification: 1.001 }),
      made("c-lower-p99", { p99: 120 }),
      made("d-longer-outage", { longest: 200_000 }),
      made("e-at-least", { atLeast: true, longest: 600_000 }),
      made("f-clients-not-back", { verdicts: ["recovered", "recovering", "recovered"] }),
      made("g-tie"),
      made("g-tie-2"),
    ];
    expect(ids(rank(summaries))).toEqual([
      "a-best-success",
      "b-less-amplification",
      "c-lower-p99",
      "e-at-least",
      "d-longer-outage",
      "g-tie",
      "g-tie-2",
      "h-slow-clients",
      "f-clients-not-back",
    ]);
  });

  it("treats differences below its resolution as ties: 0.01 percentage point of success, 0.001 of amplification, 1 ms of p99", () => {
    const a = made("a", { success: 0.99991, amplification: 1.0104, p99: 150.2 });
    const b = made("b", { success: 0.99994, amplification: 1.0096, p99: 149.9 });
    expect(compareCandidates(a, b)).toBeLessThan(0); // all tied: by id
    const c = made("c", { success: 0.99991 + 0.0002 });
    expect(compareCandidates(c, a)).toBeLessThan(0);
  });

  it("ranks the others by listed outages survived, then the longest outage survived, then success", () => {
    const one = made("one", { verdicts: ["recovered", "collapsed", "collapsed"], longest: 9_000, success: 1 });
    const two = made("two", { verdicts: ["recovered", "recovered", "collapsed"], longest: 30_000, success: 0.9 });
    const twoLonger = made("two-longer", { verdicts: ["recovered", "recovered", "collapsed"], longest: 40_000, success: 0.8 });
    const twoLongerBetter = made("two-longer-better", {
      verdicts: ["recovered", "recovered", "collapsed"],
      longest: 40_000,
      success: 0.85,
    });
    expect(ids(rank([one, two, twoLonger, twoLongerBetter]))).toEqual(["two-longer-better", "two-longer", "two", "one"]);
  });

  it("states the rule with the listed outages", () => {
    const rule = rankingRule(OUTAGES);
    expect(rule).toContain("(5s, 20s, 1m0s)");
    expect(rule).toMatch(/everyday success rate.*then retry amplification.*then p99 latency/);
  });
});

describe("the Pareto front of everyday success against the longest outage survived", () => {
  it("keeps exactly the candidates no other beats on one axis without losing on the other", () => {
    const a = made("a", { success: 0.999, longest: 10_000 });
    const b = made("b", { success: 0.995, longest: 60_000 });
    const c = made("c", { success: 0.99, longest: 30_000 }); // b beats it on both
    const d = made("d", { success: 0.999, longest: 5_000 }); // a: same success, longer
    const e = made("e", { success: 0.9995, longest: 2_000 });
    const twin = made("twin", { success: 0.995, longest: 60_000 }); // equal to b: neither dominates
    const front = paretoFront([a, b, c, d, e, twin]);
    expect(new Set(ids(front))).toEqual(new Set(["a", "b", "e", "twin"]));
  });

  it("counts an outage survived up to the longest tried above any measured one", () => {
    const atLeast = made("at-least", { success: 0.99, longest: 600_000, atLeast: true });
    const long = made("long", { success: 0.99, longest: 599_000 });
    expect(ids(paretoFront([atLeast, long]))).toEqual(["at-least"]);
  });
});

describe("the runner-up", () => {
  it("is the front member that survives longer outages when the winner won on everyday success", () => {
    const winner = made("winner", { success: 0.9999, longest: 25_000 });
    const longer = made("longer", { success: 0.999, longest: 90_000 });
    const longest = made("longest", { success: 0.99, longest: 300_000 });
    const ranked = rank([longer, winner, longest]);
    expect(ranked[0]!.candidate.id).toBe("winner");
    expect(runnerUp(ranked)).toEqual({ summary: longest, favours: "longer outages" });
  });

  it("is the front member with the best everyday success when the winner already survives the longest", () => {
    const winner = made("winner", { success: 0.999, longest: 600_000, atLeast: true });
    const fragile = made("fragile", { success: 0.9999, longest: 4_000, verdicts: ["collapsed", "collapsed", "collapsed"] });
    const other = made("other", { success: 0.998, longest: 50_000 });
    const ranked = rank([fragile, other, winner]);
    expect(ranked[0]!.candidate.id).toBe("winner");
    expect(runnerUp(ranked)).toEqual({ summary: fragile, favours: "everyday success" });
  });

  it("is the second in rank when the winner alone is the front", () => {
    const winner = made("winner", { success: 0.9999, longest: 90_000 });
    const second = made("second", { success: 0.999, longest: 30_000 });
    expect(runnerUp(rank([second, winner]))).toEqual({ summary: second, favours: "next in rank" });
  });
});

describe("the explanation", () => {
  it("says why the winner wins and what it gives up, from the figures", () => {
    const winner = made("winner", { success: 0.9999, longest: 25_000 });
    const fixed = made("fixed", { success: 0.99999, longest: 4_000, verdicts: ["collapsed", "collapsed", "collapsed"] });
    const longer = made("longer", { success: 0.999, longest: 90_000 });
    const text = explanation(rank([winner, fixed, longer]), OUTAGES, 600_000);
    expect(text).toContain("winner ranks first");
    expect(text).toContain("Fixed retry, for comparison, survives outages up to 4s");
    expect(text).toContain("everyday success: fixed reaches 100.00 %, but its server collapses after the 5s outage");
    expect(text).toContain("outage margin: longer survives outages up to 1m30s");
  });

  it("says so when no candidate survives every listed outage", () => {
    const a = made("a", { verdicts: ["recovered", "collapsed", "collapsed"], longest: 9_000 });
    expect(explanation([a], OUTAGES, 600_000)).toMatch(
      /^No candidate survives every listed outage \(5s, 20s, 1m0s\)\. a survives the most \(1 of 3/,
    );
  });
});

import { describe, expect, it } from "vitest";
import type { Candidate } from "../../../src/recommend/candidates.ts";
import type { Verdict } from "../../../src/model/verdict.ts";
import { explanation, paretoFront, rank, ranking, rankingRule, runnerUp, tieBreak } from "../../../src/recommend/ranking.ts";
import { deployability, headline, type RecommendationInput, serverAddition } from "../../../src/choose/recommendation.ts";
import { stability, stabilityText } from "../../../src/choose/stability.ts";
import type { CandidateSummary } from "../../../src/recommend/summary.ts";

const OUTAGES = [5_000, 20_000, 60_000];
const SLO = 10_000;

interface Made {
  success?: number;
  amplification?: number;
  retriedP99?: number | undefined;
  longest?: number;
  atLeast?: boolean;
  /** One verdict per listed outage. */
  verdicts?: readonly Verdict[];
  clientsBackMs?: number;
  /** Spreads across seeds of success within the SLO, the retried p99 and amplification. */
  spread?: { success?: number; retriedP99?: number; amplification?: number };
  seeds?: number;
  /** A pair: the server lever and its settings. */
  lever?: string;
  server?: Record<string, string>;
  client?: Record<string, string>;
}

/** A hand-made summary: only the figures the ranking reads. */
function made(id: string, figures: Made = {}): CandidateSummary {
  const verdicts = figures.verdicts ?? ["recovered", "recovered", "recovered"];
  const lever = figures.lever ?? "default";
  const candidate: Candidate = {
    id,
    family: id,
    origin: lever === "default" ? "strategy" : "pair",
    summary: id,
    client: figures.client ?? { strategy: id.split("@")[0]! },
    server: figures.server ?? {},
    lever,
    clientId: id.split("@")[0]!,
  };
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
  const success = figures.success ?? 0.999;
  const retriedP99 = "retriedP99" in figures ? figures.retriedP99 : 400;
  return {
    candidate,
    seeds: figures.seeds ?? 3,
    everyday: {
      successRate: success,
      amplification: figures.amplification ?? 1.1,
      p99Ms: 150,
      requests: 10_000,
      sloSuccess: success,
      retriedP50Ms: retriedP99 === undefined ? undefined : retriedP99 / 2,
      retriedP99Ms: retriedP99,
      retried: 100,
      spread: {
        successRate: figures.spread?.success ?? 0,
        sloSuccess: figures.spread?.success ?? 0,
        amplification: figures.spread?.amplification ?? 0,
        retriedP50Ms: 0,
        retriedP99Ms: figures.spread?.retriedP99 ?? 0,
      },
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
const COLLAPSES: readonly Verdict[] = ["recovered", "recovered", "collapsed"];

describe("the ranking rule", () => {
  it("puts every candidate that survives each listed outage before any that does not, whatever its everyday figures", () => {
    const survivor = made("survivor", { success: 0.95, amplification: 1.5 });
    const fragile = made("fragile", { success: 1, amplification: 1, verdicts: COLLAPSES });
    expect(ids(rank([fragile, survivor]))).toEqual(["survivor", "fragile"]);
  });

  it(
    "ranks survivors client-only first, then by success within the SLO, the retried requests' p99, amplification, " +
      "the longest outage, the clients' recovery, then id",
    () => {
      const summaries = [
        made("h-slow-clients", { clientsBackMs: 30_000 }),
        made("a-best-success", { success: 0.9995 }),
        made("c-less-amplification", { amplification: 1.001 }),
        made("b-faster-retries", { retriedP99: 200 }),
        made("d-longer-outage", { longest: 200_000 }),
        made("e-at-least", { atLeast: true, longest: 600_000 }),
        made("f-clients-not-back", { verdicts: ["recovered", "recovering", "recovered"] }),
        made("g-tie"),
        made("g-tie-2"),
        made("a-pair@cancel-on-disconnect", { success: 1, lever: "cancel-on-disconnect", server: { "cancel-on-disconnect": "true" } }),
        made("no-retried-request", { retriedP99: undefined }),
      ];
      expect(ids(rank(summaries))).toEqual([
        "a-best-success",
        "b-faster-retries",
        "c-less-amplification",
        "e-at-least",
        "d-longer-outage",
        "g-tie",
        "g-tie-2",
        "h-slow-clients",
        "f-clients-not-back",
        "no-retried-request",
        "a-pair@cancel-on-disconnect",
      ]);
    },
  );

  it("ranks what users feel before load: full jitter's 250 ms retries beat a 9 s wait that saves 0.4 % of attempts", () => {
    // The README's old mobile-fleet answer: the reference backoff won on amplification 1.016x against 1.020x.
    const reference = made("exponential-backoff", { amplification: 1.016, retriedP99: 9_031 });
    const jitter = made("full-jitter", { amplification: 1.02, retriedP99: 250 });
    expect(ids(rank([reference, jitter]))).toEqual(["full-jitter", "exponential-backoff"]);
  });

  it("treats a difference within the seeds' spread, or within 1 % of the larger value, as a tie broken by the next figure", () => {
    // 1.016x against 1.020x: within 1 %, a tie; the retried p99 does not decide either (also within 1 %): the longest outage does.
    const a = made("a", { amplification: 1.016, retriedP99: 400, longest: 50_000 });
    const b = made("b", { amplification: 1.02, retriedP99: 403, longest: 90_000 });
    expect(ids(rank([a, b]))).toEqual(["b", "a"]);
    expect(ranking([a, b]).decidedBy).toEqual(["the longest outage survived"]);
    // Outside 1 % and outside the spread, amplification decides.
    const heavy = made("heavy", { amplification: 1.05, longest: 90_000 });
    expect(ids(rank([heavy, a]))).toEqual(["a", "heavy"]);
    // The same difference within either candidate's spread across seeds is a tie.
    const noisy = made("noisy", { amplification: 1.05, longest: 90_000, spread: { amplification: 0.04 } });
    expect(ids(rank([noisy, a]))).toEqual(["noisy", "a"]);
    // Success is compared on the share that misses the SLO: 99.0 % against 99.9 % is no tie…
    expect(ids(rank([made("good", { success: 0.99, longest: 900_000 }), made("better", { success: 0.999 })]))).toEqual(["better", "good"]);
    // …but within its spread across seeds it is.
    const spread = { success: 0.01 };
    expect(ids(rank([made("good", { success: 0.99, longest: 900_000, spread }), made("better", { success: 0.999 })]))).toEqual([
      "good",
      "better",
    ]);
  });

  it("groups from the best: a chain of small differences does not carry a tie beyond noise of the best", () => {
    const best = made("best", { amplification: 1.0, longest: 10_000 });
    const near = made("near", { amplification: 1.009, longest: 20_000 }); // within 1 % of best
    const far = made("far", { amplification: 1.018, longest: 30_000 }); // within 1 % of near, not of best
    expect(ids(rank([far, near, best]))).toEqual(["near", "best", "far"]);
  });

  it("says when the winner is decided by a tie-break, and by which figure", () => {
    const a = made("a", { amplification: 1.016, retriedP99: 400 });
    const b = made("b", { amplification: 1.02, retriedP99: 300 });
    expect(tieBreak(ranking([a, b]))).toBe(
      "Decided by a tie-break: a is level with it within noise on success within the SLO, and the retried requests' p99 decides.",
    );
    const clear = made("clear", { success: 1 });
    expect(tieBreak(ranking([a, clear]))).toBeUndefined();
    expect(tieBreak(ranking([a, made("z", { verdicts: COLLAPSES })]))).toBeUndefined();
  });

  it("ranks the others by listed outages survived, then the longest outage survived, then success within the SLO", () => {
    const one = made("one", { verdicts: ["recovered", "collapsed", "collapsed"], longest: 9_000, success: 1 });
    const two = made("two", { verdicts: COLLAPSES, longest: 30_000, success: 0.9 });
    const twoLonger = made("two-longer", { verdicts: COLLAPSES, longest: 40_000, success: 0.8 });
    const twoLongerBetter = made("two-longer-better", { verdicts: COLLAPSES, longest: 40_000, success: 0.85 });
    expect(ids(rank([one, two, twoLonger, twoLongerBetter]))).toEqual(["two-longer-better", "two-longer", "two", "one"]);
  });

  it("states the rule from the criteria it ranks by, with the listed outages and the SLO", () => {
    const rule = rankingRule(OUTAGES, SLO);
    expect(rule).toContain("(5s, 20s, 1m0s)");
    expect(rule).toMatch(
      /client-only candidates before pairs.*then by success within the SLO of 10s.*then the p99 latency of the successful requests that needed a retry.*then retry amplification/,
    );
    expect(rule).toContain("Success within the SLO, the retried requests' p99 and amplification are compared within noise");
    expect(rule).toContain("or than 1 % of the larger value");
  });
});

describe("the recommendation", () => {
  const input = (summaries: readonly CandidateSummary[], extra: Partial<RecommendationInput> = {}): RecommendationInput => ({
    ranking: ranking(summaries),
    outagesMs: OUTAGES,
    maxOutageMs: 600_000,
    sloMs: SLO,
    stability: undefined,
    firstWaitOf: () => ({ meanMs: 50, settingMs: 100 }),
    ...extra,
  });

  it("leads with the server when no client-only candidate qualifies: the server setting first, the client setting with it", () => {
    const pair = made("fixed@cancel-on-disconnect", {
      lever: "cancel-on-disconnect",
      server: { "cancel-on-disconnect": "true" },
      client: { strategy: "fixed" },
      atLeast: true,
      longest: 600_000,
    });
    const clientOnly = made("exponential-backoff", { verdicts: COLLAPSES, success: 1 });
    const text = headline(input([clientOnly, pair]));
    expect(text).toMatch(
      /^No client-only policy survives every listed outage \(5s, 20s, 1m0s\): the lever is on the server\. Configure the server: -cancel-on-disconnect; with the clients: -strategy fixed \(fixed\)\. Everyday 99\.90 % of requests succeed within the SLO of 10s/,
    );
    expect(serverAddition(input([clientOnly, pair]))).toBeUndefined();
  });

  it("recommends a client-only candidate that qualifies, and says what the best server lever would add", () => {
    const client = made("full-jitter", { longest: 30_000, verdicts: ["recovered", "recovered", "recovered"] });
    const pair = made("full-jitter@deadline-aware", {
      lever: "deadline-aware",
      server: { "deadline-aware": "true" },
      atLeast: true,
      longest: 600_000,
      success: 1,
    });
    const words = input([pair, client]);
    expect(headline(words)).toMatch(
      /^Configure the clients: -strategy full-jitter \(full-jitter: full-jitter\); the server needs no change\./,
    );
    expect(serverAddition(words)).toMatch(
      /^What the best server lever would add: full-jitter@deadline-aware \(server: -deadline-aware\) survives outages up to at least 10m0s \(the clients alone: 30s\)/,
    );
  });

  it("says when the best server lever adds nothing measured", () => {
    const client = made("full-jitter", { atLeast: true, longest: 600_000 });
    const pair = made("full-jitter@backlog=128", { lever: "backlog=128", server: { backlog: "128" }, atLeast: true, longest: 600_000 });
    expect(serverAddition(input([client, pair]))).toBe(
      "The server's levers add nothing this run measures: with the best, full-jitter@backlog=128 (server: -backlog 128), " +
        "every figure is level with the clients' alone (outages survived up to at least 10m0s).",
    );
  });

  it("explains a first wait longer than the SLO or of tens of seconds, with the best candidate without it beside it", () => {
    const slow = made("exponential-backoff", { success: 1 });
    const quick = made("full-jitter", { success: 0.999 });
    const waits = new Map([
      ["exponential-backoff", { meanMs: 27_183, settingMs: 54_366 }],
      ["full-jitter", { meanMs: 50, settingMs: 100 }],
    ]);
    const text = deployability(input([slow, quick], { firstWaitOf: (summary) => waits.get(summary.candidate.id)! }))!;
    expect(text).toContain("its first retry waits 27.183s on average, longer than the SLO of 10s");
    expect(text).toContain("gRPC initialBackoff 54.366s");
    expect(text).toContain("The best candidate without it is full-jitter (rank 2)");
    const quicker = made("full-jitter", { success: 1, retriedP99: 200 });
    expect(deployability(input([quicker, slow], { firstWaitOf: (summary) => waits.get(summary.candidate.id)! }))).toBeUndefined();
  });
});

describe("stability", () => {
  it("counts the seeds each top candidate wins alone, and labels a winner of fewer than 80 % unstable", () => {
    const seeds = [1, 2, 3, 4, 5];
    // a wins on seeds where its retried p99 is lower; b on the others.
    const perSeed = (wins: readonly boolean[]) => [
      wins.map((win) => made("a", { retriedP99: win ? 200 : 900, seeds: 1 })),
      wins.map(() => made("b", { retriedP99: 500, seeds: 1 })),
    ];
    const steady = stability(perSeed([true, true, true, true, false]), seeds);
    expect(steady.wins).toEqual([
      { id: "a", wins: 4, level: 0 },
      { id: "b", wins: 1, level: 0 },
    ]);
    expect(steady.stable).toBe(true);
    expect(stabilityText(steady)).toBe("It comes first with 4 of 5 seeds (each seed ranked alone, against the next 1: b 1).");
    const shaky = stability(perSeed([true, true, true, false, false]), seeds);
    expect(shaky.share).toBeCloseTo(0.6, 9);
    expect(shaky.stable).toBe(false);
    expect(stabilityText(shaky)).toMatch(/^UNSTABLE: it comes first with only 3 of 5 seeds, fewer than 80 %/);
  });

  it("counts a seed on which the top candidates are level on every figure as shared, never as a win by id", () => {
    const seeds = [1, 2];
    const perSeed = [seeds.map(() => made("a", { seeds: 1 })), seeds.map(() => made("b", { seeds: 1 }))];
    const level = stability(perSeed, seeds);
    expect(level.wins).toEqual([
      { id: "a", wins: 0, level: 2 },
      { id: "b", wins: 0, level: 2 },
    ]);
    expect(level.stable).toBe(true);
    expect(stabilityText(level)).toBe(
      "It comes first with 2 of 2 seeds, level on every figure with another of them in 2 (each seed ranked alone, against the next 1: b 0 (+2 level)).",
    );
    expect(tieBreak(ranking([made("b"), made("a"), made("c", { success: 0.99 })]))).toBe(
      "Level on every figure, within noise: b does as well as a, which is shown first by its id alone; any of them will do.",
    );
  });
});

describe("the Pareto front of success within the SLO against the longest outage survived", () => {
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
  it("is the front member that survives longer outages when the winner won on success within the SLO", () => {
    const winner = made("winner", { success: 0.9999, longest: 25_000 });
    const longer = made("longer", { success: 0.999, longest: 90_000 });
    const longest = made("longest", { success: 0.99, longest: 300_000 });
    const ranked = rank([longer, winner, longest]);
    expect(ranked[0]!.candidate.id).toBe("winner");
    expect(runnerUp(ranked)).toEqual({ summary: longest, favours: "longer outages" });
  });

  it("is the front member with the best success within the SLO when the winner already survives the longest", () => {
    const winner = made("winner", { success: 0.999, longest: 600_000, atLeast: true });
    const fragile = made("fragile", { success: 0.9999, longest: 4_000, verdicts: ["collapsed", "collapsed", "collapsed"] });
    const other = made("other", { success: 0.998, longest: 50_000 });
    const ranked = rank([fragile, other, winner]);
    expect(ranked[0]!.candidate.id).toBe("winner");
    expect(runnerUp(ranked)).toEqual({ summary: fragile, favours: "success within the SLO" });
  });

  it("is the second in rank when the winner alone is the front", () => {
    const winner = made("winner", { success: 0.9999, longest: 90_000 });
    const second = made("second", { success: 0.999, longest: 30_000 });
    expect(runnerUp(rank([second, winner]))).toEqual({ summary: second, favours: "next in rank" });
  });
});

describe("the explanation", () => {
  it("says why the winner wins and what it gives up, from the figures", () => {
    const winner = made("winner", { success: 0.9995, longest: 25_000 });
    const fixed = made("fixed", { success: 1, longest: 4_000, verdicts: ["collapsed", "collapsed", "collapsed"] });
    const longer = made("longer", { success: 0.999, longest: 90_000 });
    const text = explanation(rank([winner, fixed, longer]), OUTAGES, 600_000, SLO);
    expect(text).toContain("winner ranks first");
    expect(text).toContain("Fixed retry, for comparison, survives outages up to 4s");
    expect(text).toContain("success within the SLO: fixed reaches 100.00 %, but its server collapses after the 5s outage");
    expect(text).toContain("outage margin: longer survives outages up to 1m30s");
  });

  it("says so when no candidate survives every listed outage", () => {
    const a = made("a", { verdicts: ["recovered", "collapsed", "collapsed"], longest: 9_000 });
    expect(explanation([a], OUTAGES, 600_000, SLO)).toMatch(
      /^No candidate survives every listed outage \(5s, 20s, 1m0s\)\. a survives the most \(1 of 3/,
    );
  });
});

import { describe, expect, it } from "vitest";
import type { Candidate } from "../../../src/recommend/candidates.ts";
import { longestSurvived, type MeasurePlan, measure, outageRun } from "../../../src/recommend/measure.ts";
import { outageCell } from "../../../src/recommend/report.ts";
import { simValuesFor } from "../../../src/recommend/settings.ts";
import { summarize } from "../../../src/recommend/summary.ts";
import { serverIsBack, worstVerdict } from "../../../src/model/verdict.ts";
import { percentile } from "../../../src/model/percentile.ts";
import { simulationConfigFrom } from "../../../src/config/simulation.ts";
import { simulate } from "../../../src/runner/simulate.ts";

const BISECTION = { minOutageMs: 250, maxOutageMs: 600_000, bisectionRatio: 1.05, bisectionMs: 250 };

/** A server that recovers from outages up to `limitMs`, counting the simulations asked for. */
function threshold(limitMs: number) {
  const tried: number[] = [];
  return {
    tried,
    recovers: (outageMs: number) => {
      tried.push(outageMs);
      return outageMs <= limitMs;
    },
  };
}

describe("the bisection for the longest outage survived", () => {
  it("brackets the threshold to 5 % or 250 ms, on a logarithmic scale", () => {
    for (const limitMs of [300, 4_000, 12_345, 123_456]) {
      const { recovers } = threshold(limitMs);
      const { survivedMs, collapsedMs } = longestSurvived(BISECTION, [], recovers);
      expect(survivedMs).toBeLessThanOrEqual(limitMs);
      expect(collapsedMs).toBeGreaterThan(limitMs);
      expect(collapsedMs! / survivedMs <= 1.05 || collapsedMs! - survivedMs <= 250).toBe(true);
    }
  });

  it("starts from what the listed outages showed, and needs fewer simulations for it", () => {
    const cold = threshold(34_000);
    longestSurvived(BISECTION, [], cold.recovers);
    const warm = threshold(34_000);
    const known = [
      { outageMs: 5_000, verdict: "recovered" as const },
      { outageMs: 20_000, verdict: "recovering" as const },
      { outageMs: 60_000, verdict: "collapsed" as const },
    ];
    const result = longestSurvived(BISECTION, known, warm.recovers);
    expect(result.survivedMs).toBeLessThanOrEqual(34_000);
    expect(result.collapsedMs).toBeGreaterThan(34_000);
    expect(warm.tried.every((ms) => ms > 20_000 && ms < 60_000)).toBe(true);
    expect(warm.tried.length).toBeLessThan(cold.tried.length);
  });

  it("reports no outage survived, or at least the longest tried", () => {
    expect(longestSurvived(BISECTION, [], threshold(100).recovers)).toEqual({ survivedMs: 0, collapsedMs: 250 });
    expect(longestSurvived(BISECTION, [], threshold(Infinity).recovers)).toEqual({ survivedMs: 600_000, collapsedMs: undefined });
    // A listed outage that survived is below the shortest that collapsed, even if a longer one survived.
    const odd = longestSurvived(
      BISECTION,
      [
        { outageMs: 5_000, verdict: "collapsed" },
        { outageMs: 20_000, verdict: "recovered" },
      ],
      threshold(3_000).recovers,
    );
    expect(odd.collapsedMs).toBeLessThanOrEqual(5_000);
    expect(odd.survivedMs).toBeLessThanOrEqual(3_000);
  });
});

describe("verdicts", () => {
  it("are the model's: the server is back when recovered or recovering; the worst of several wins, too-short worst of all", () => {
    expect(["recovered", "recovering", "collapsed", "too-short"].map((verdict) => serverIsBack(verdict as never))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(worstVerdict(["recovered", "recovering", "recovered"])).toBe("recovering");
    expect(worstVerdict(["recovered", "collapsed"])).toBe("collapsed");
    expect(worstVerdict(["collapsed", "too-short", "recovered"])).toBe("too-short");
  });

  it("counts a too-short run as not survived in the bisection, never as survived", () => {
    const known = [
      { outageMs: 5_000, verdict: "recovered" as const },
      { outageMs: 20_000, verdict: "too-short" as const },
    ];
    const result = longestSurvived(BISECTION, known, threshold(Infinity).recovers);
    expect(result.collapsedMs).toBeLessThanOrEqual(20_000);
  });

  it("shows a too-short outage as too-short in the table, not as collapsed", () => {
    const outage = {
      outageMs: 6_000,
      verdicts: ["recovered", "too-short"] as const,
      verdict: "too-short" as const,
      survived: false,
      serverRecoveryMs: null,
      clientRecoveryMs: null,
      peakLoad: null,
      servedForNobody: 0,
    };
    expect(outageCell(outage)).toBe("too-short (1/2 ok)");
    expect(outageCell({ ...outage, verdicts: ["collapsed", "recovered"], verdict: "collapsed" })).toBe("collapsed (1/2 ok)");
  });

  it("takes the nearest-rank percentile", () => {
    const values = Float64Array.from({ length: 200 }, (_, index) => index + 1);
    expect(percentile(values, 0.99)).toBe(198);
    expect(percentile(values, 1)).toBe(200);
    expect(percentile(new Float64Array(0), 0.99)).toBeUndefined();
  });
});

describe("measuring a candidate", () => {
  // The article's experiment scaled down: 200 users offering ~95 req/s, a 400 ms timeout.
  const system = { clients: 200, lambda: 2, timeout: 400, interval: 1_000 };
  const plan: MeasurePlan = {
    steadyMs: 5_000,
    observeMs: 15_000,
    everydayMs: 20_000,
    sloMs: 2_000,
    outagesMs: [1_000, 6_000],
    minOutageMs: 250,
    maxOutageMs: 60_000,
    bisectionRatio: 1.05,
    bisectionMs: 250,
  };
  const job = (client: Record<string, string>, seed: number) => ({
    candidateIndex: 0,
    seed,
    config: simulationConfigFrom(simValuesFor(system, client)),
    plan,
    keepTimelines: true,
  });

  // Time limits bound a run on a loaded machine; they measure nothing.
  it("is deterministic, and the seed matters", { timeout: 60_000 }, () => {
    const first = measure(job({ strategy: "full-jitter" }, 3));
    expect(measure(job({ strategy: "full-jitter" }, 3))).toEqual(first);
    expect(measure(job({ strategy: "full-jitter" }, 4)).everyday).not.toEqual(first.everyday);
  });

  it(
    "counts requests and attempts: one attempt per request without retries; fixed retry collapses after a 6 s outage, no retries does not",
    {
      timeout: 60_000,
    },
    () => {
      const none = measure(job({ strategy: "fixed", "max-attempts": "1" }, 1));
      expect(none.everyday.attempts).toBe(none.everyday.firstAttempts);
      expect(none.everyday.requests).toBeGreaterThan(1_500); // ~95 req/s for 20 s
      expect(none.everyday.succeeded).toBe(none.everyday.latenciesMs.length);
      expect(none.outages.map((outage) => outage.verdict)).toEqual(["recovered", "recovered"]);
      expect(none.outages[1]!.servedForNobody).toBeGreaterThan(0); // the requests queued during the outage timed out
      expect(none.outages[1]!.timeline?.server.length).toBeGreaterThan(0);
      const fixed = measure(job({ strategy: "fixed" }, 1));
      expect(fixed.outages[1]!.verdict).toBe("collapsed");
      expect(fixed.longest.survivedMs).toBeLessThan(none.longest.survivedMs);
      expect(fixed.outages[1]!.metrics.peakAmplification).toBeGreaterThan(2);

      const candidate: Candidate = {
        id: "fixed",
        family: "fixed",
        origin: "baseline",
        summary: "",
        client: {},
        server: {},
        lever: "default",
        clientId: "fixed",
      };
      expect(none.everyday.retriedLatenciesMs.length).toBe(0);
      const pooled = summarize(candidate, [fixed, measure(job({ strategy: "fixed" }, 2))]);
      expect(pooled.seeds).toBe(2);
      expect(pooled.outages[1]).toMatchObject({ verdict: "collapsed", survived: false, serverRecoveryMs: null });
      expect(pooled.survivesAll).toBe(false);
    },
  );

  it(
    "counts success within the SLO over the requests that had the whole SLO, and the wait of those that needed a retry",
    { timeout: 60_000 },
    () => {
      // 5 % of attempts fail: full jitter retries within ~100 ms, the reference backoff waits e·lambda (~5.4 s), past the 2 s SLO.
      const withErrors = (strategy: string) => measure(job({ strategy, "error-rate": "0.05" }, 1)).everyday;
      const quick = withErrors("full-jitter");
      const slow = withErrors("exponential-backoff");
      for (const everyday of [quick, slow]) {
        expect(everyday.sloRequests).toBeGreaterThan(1_000); // ~95 req/s for the 18 s that end at least the SLO before the run
        expect(everyday.sloRequests).toBeLessThan(everyday.requests);
        expect(everyday.withinSlo).toBeLessThanOrEqual(everyday.sloRequests);
        expect(everyday.retriedLatenciesMs.length).toBeGreaterThan(20);
      }
      expect(quick.withinSlo / quick.sloRequests).toBeGreaterThan(0.999);
      expect(percentile(quick.retriedLatenciesMs, 0.99)).toBeLessThan(1_000);
      // The reference backoff's first wait is e x an exponential think time (median ~3.8 s): most retried requests miss the SLO.
      expect(percentile(slow.retriedLatenciesMs, 0.5)).toBeGreaterThan(plan.sloMs);
      expect(slow.withinSlo / slow.sloRequests).toBeLessThan(0.985);
      expect(slow.withinSlo / slow.sloRequests).toBeGreaterThan(0.9);
    },
  );
});

describe("an outage run ended once the server cannot come back (haltWhenCollapsed)", () => {
  const plan = { steadyMs: 15_000, observeMs: 90_000 };
  const config = (strategy: string) => simulationConfigFrom(simValuesFor({}, { strategy }));

  it("ends once the server cannot come back under its line, with the verdict the whole run gives", () => {
    // The article's system: fixed retry after a 20 s stop collapses for good; the run can stop early.
    for (const seed of [1, 2, 3]) {
      const whole = outageRun(config("fixed"), seed, plan, 20_000);
      const cut = outageRun(config("fixed"), seed, plan, 20_000, { haltWhenCollapsed: true });
      expect(whole.result.verdict).toBe("collapsed");
      expect(cut.result.verdict).toBe("collapsed");
      expect(cut.events).toBeLessThan(whole.events / 2);
      // What the ranking reads of a listed outage is the whole run's.
      const read = ({ result }: typeof whole) => ({
        servedForNobody: result.servedForNobody,
        outageWindows: result.outageWindows,
        baseline: result.metrics.baselineOkPerSec,
        peakLoad: result.metrics.peakAmplification,
        serverBack: result.metrics.serverRecoveryMs,
        clientsBack: result.metrics.clientRecoveryMs,
      });
      expect(read(cut)).toEqual(read(whole));
    }
  });

  it("ends as the client window open when the server went down for good closes, so that no answered window is lost", () => {
    const base = { ...config("fixed"), seed: 1, outages: [{ atMs: 15_000, durationMs: 20_000 }], durationMs: 125_000 };
    // From 41 s: the halting report falls between two window closes (every 5 s), not on one.
    const run = simulate(base, undefined, { windowHistograms: false, haltOnceDown: { above: 30, notBeforeMs: 41_000 } });
    expect(run.haltedDown).toBe(true);
    expect(run.endMs).toBeLessThan(125_000);
    expect(run.client.at(-1)!.endMs).toBe(run.endMs);
    expect(run.endMs % base.intervalMs).toBe(0);
  });

  it("runs to the end where the server comes back, or where it is down but could still come back", () => {
    for (const [strategy, outageMs] of [
      ["exponential-backoff", 20_000],
      ["fixed", 1_000],
      ["full-jitter", 60_000],
    ] as const) {
      const whole = outageRun(config(strategy), 1, plan, outageMs);
      const cut = outageRun(config(strategy), 1, plan, outageMs, { haltWhenCollapsed: true });
      expect(cut.result.verdict, strategy).toBe(whole.result.verdict);
      if (serverIsBack(whole.result.verdict)) expect(cut.events, strategy).toBe(whole.events);
    }
  });
});

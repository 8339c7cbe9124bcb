import { describe, expect, it } from "vitest";
import type { ScenarioMetrics } from "../../../src/model/scenario-metrics.ts";
import { explainVerdict } from "../../../src/report/verdict-why.ts";

const base: ScenarioMetrics = {
  baselineOkPerSec: 100,
  outageAmplification: 2.51,
  peakAmplification: 3.43,
  peakConcurrencyAfterResume: 46_234,
  peakDelayAfterResumeMs: 5.2e63,
  serverRecoveryMs: undefined,
  clientRecoveryMs: undefined,
  verdict: "collapsed",
  why: "server still above its limit of 30 at its last report, 90.0 s after resume, with 46234 requests in service: a metastable failure",
  wastedWork: undefined,
  goodputAfterResumeOkPerSec: 0,
  retryAmplification: 48.2,
};

describe("explainVerdict", () => {
  it("gives the verdict's reason, then the outage load and the pile-up on resume behind it", () => {
    expect(explainVerdict(base)).toBe(
      "Server still above its limit of 30 at its last report, 90.0 s after resume, with 46234 requests in service: a metastable " +
        "failure. During the outage the clients sent 2.51x the normal load (worst window 3.43x); after the resume up to 46,234 " +
        "requests were in service and the modelled delay reached 1.65e+53 years.",
    );
  });

  it("rounds the delay to what a reader compares", () => {
    const recovered = { ...base, peakConcurrencyAfterResume: 1_033, peakDelayAfterResumeMs: 2_611.3, verdict: "recovered" as const };
    expect(explainVerdict(recovered)).toContain("up to 1,033 requests were in service and the modelled delay reached 2.6s.");
    expect(explainVerdict({ ...recovered, peakDelayAfterResumeMs: 205.87 })).toContain("reached 206ms.");
  });

  it("leaves out the figures after a resume the run never reached", () => {
    const text = explainVerdict({
      ...base,
      verdict: "too-short",
      why: "the run ended at 30.0 s, before the resume at 35.0 s: nothing to judge",
    });
    expect(text).toBe(
      "The run ended at 30.0 s, before the resume at 35.0 s: nothing to judge. During the outage the clients sent 2.51x the " +
        "normal load (worst window 3.43x).",
    );
  });
});

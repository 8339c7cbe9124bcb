import { describe, expect, it } from "vitest";
import type { ScenarioMetrics } from "../../../src/model/scenario-metrics.ts";
import { explainVerdict } from "../../../src/scenario/verdict-why.ts";

const base: ScenarioMetrics = {
  baselineOkPerSec: 100,
  outageAmplification: 2.51,
  peakAmplification: 3.43,
  peakConcurrencyAfterResume: 46_234,
  peakDelayAfterResumeMs: 5.2e63,
  serverRecoveryMs: undefined,
  clientRecoveryMs: undefined,
  verdict: "collapsed",
  wastedWork: undefined,
};

describe("explainVerdict", () => {
  it("explains a collapse by the outage load and the pile-up on resume", () => {
    expect(explainVerdict(base, 30)).toBe(
      "During the outage the clients sent 2.51x the normal load (worst window 3.43x). After the resume up to 46,234 requests " +
        "were in service, 1541x the limit of 30, and the modelled delay reached 1.65e+53 years. Requests kept timing out, and " +
        "their retries kept the server above its limit to the end of the observation: the server never came back although " +
        "the outage was over (a metastable failure).",
    );
  });

  it("says when the server came back but the clients did not", () => {
    const text = explainVerdict({ ...base, peakConcurrencyAfterResume: 900, peakDelayAfterResumeMs: 1_700, serverRecoveryMs: 3_000 }, 30);
    expect(text).toContain("the modelled delay reached 1.7s. The server was back under its limit 3s after the resume, but the clients'");
  });

  it("gives both recovery times of a recovery", () => {
    const text = explainVerdict(
      {
        ...base,
        outageAmplification: 0.57,
        peakAmplification: 0.83,
        peakConcurrencyAfterResume: 1_033,
        peakDelayAfterResumeMs: 2_611.3,
        serverRecoveryMs: 3_012,
        clientRecoveryMs: 45_000,
        verdict: "recovered",
      },
      30,
    );
    expect(text).toBe(
      "During the outage the clients sent 0.57x the normal load (worst window 0.83x). After the resume up to 1,033 requests " +
        "were in service, 34x the limit of 30, and the modelled delay reached 2.6s. The server was back under its limit 3s " +
        "after the resume, and the clients 45s after it.",
    );
  });
});

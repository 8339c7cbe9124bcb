import { describe, expect, it } from "vitest";
import { serverIsBack } from "../../../src/model/verdict.ts";
import {
  anchorRun,
  BROOKER_BACKOFF_AND_JITTER,
  BROOKER_NO_BACKOFF,
  BROOKER_SPIKE,
  capacityCut,
  DEFAULT_FULL_JITTER,
  METASTABLE_CAPACITY_CUT,
  simValues,
} from "../../../src/sim/anchors.ts";
import { bisectCriticalOutage } from "../../../src/runner/critical-outage.ts";
import { criticalTrouble } from "../../../src/sim/main.ts";
import { trialMetrics } from "../../../src/sim/trial.ts";

/*
 * The published outcomes the simulator must reproduce (docs/sim-anchors.json has the full
 * record, ten seeds each, from scripts/sim-anchors.ts); here two seeds each and a narrower search.
 */
const SEEDS = [1, 2];

describe("Brooker's collapse simulation: a spike from 40 to 80 requests/s for 5 s on 1 s + 10 ms × concurrency", () => {
  it("without backoff the server never recovers", { timeout: 60_000 }, () => {
    for (const seed of SEEDS) {
      const metrics = anchorRun([...BROOKER_SPIKE, ...BROOKER_NO_BACKOFF], seed);
      expect(metrics.verdict).toBe("collapsed");
      expect(metrics.why).toMatch(/^after spike@20s\+5s\*2 ended at 25s: server still above its limit of 199/);
    }
  });

  it("with his backoff and jitter (U(0, 20 s), then U(0, 40 s)) it recovers", { timeout: 60_000 }, () => {
    for (const seed of SEEDS) expect(anchorRun([...BROOKER_SPIKE, ...BROOKER_BACKOFF_AND_JITTER], seed).verdict).toBe("recovered");
  });

  it("full jitter at this library's 100 ms base is as good as no backoff against a 3 s timeout: it collapses", { timeout: 60_000 }, () => {
    for (const seed of SEEDS) expect(anchorRun([...BROOKER_SPIKE, ...DEFAULT_FULL_JITTER], seed).verdict).toBe("collapsed");
  });
});

describe("Metastable Failures in the Wild: a capacity cut to 40 % on a thread pool with fixed retries", () => {
  it("recovers after 9 s and is metastable after 10 s, as published", { timeout: 60_000 }, () => {
    expect(anchorRun([...METASTABLE_CAPACITY_CUT, ...capacityCut("9s")], 1).verdict).toBe("recovered");
    const long = anchorRun([...METASTABLE_CAPACITY_CUT, ...capacityCut("10s")], 1);
    expect(long.verdict).toBe("collapsed");
    expect(long.why).toMatch(/^after capacity@30s\+10s\*0\.4 ended at 40s: .* \(queue \d+, threads busy 8\): a metastable failure$/);
  });

  it("the critical search over the cut's length finds the boundary between them", { timeout: 60_000 }, async () => {
    const trouble = criticalTrouble(simValues([...METASTABLE_CAPACITY_CUT, ...capacityCut("10s")]));
    expect(trouble.name).toBe("capacity ×0.4");
    const found = await bisectCriticalOutage(
      async (lengthMs) => serverIsBack(trialMetrics(trouble.withLength(lengthMs)).verdict),
      () => 1,
      500,
      16_000,
    );
    expect(found.kind).toBe("between");
    if (found.kind === "between") {
      expect(found.lowMs).toBeGreaterThanOrEqual(9_000);
      expect(found.highMs).toBeLessThanOrEqual(10_000);
    }
  });
});

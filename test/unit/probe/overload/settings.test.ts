import { describe, expect, it } from "vitest";
import { parseScenario } from "../../../../src/scenario-file/read.ts";
import { SIM_TARGET } from "../../../../src/options/sim.ts";
import type { ServerModelSpec } from "../../../../src/model/servers/models.ts";
import type { Fate } from "../../../../src/runtime/one-request.ts";
import type { OverloadFindings } from "../../../../src/probe/overload/overload.ts";
import { overloadScenario, overloadScenarioLines } from "../../../../src/probe/overload/settings.ts";
import { scenarioYaml } from "../../../../src/probe/scenario-out.ts";

const QUEUE: ServerModelSpec = {
  kind: "queue",
  pool: { threads: 4, serviceTimeMs: 50, serviceDist: "constant", serviceSigma: 0.5, queueOrder: "fifo", queueLimit: Infinity },
};
const EXPONENTIAL: ServerModelSpec = {
  kind: "exponential",
  latency: { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 },
};
const DATE = new Date("2026-11-28T12:00:00Z");

/** Findings with the excess turned away by `excess` once 24 were held, and `servedShare` of the abandoned work served. */
function findings(excess: Fate | undefined, servedShare: number | undefined): OverloadFindings {
  const counts = { served: 100, shed: 0, error: 0, timeout: 24, "connect-timeout": 0, refused: 0, reset: 0, "probe-limit": 0 };
  if (excess !== undefined) counts[excess] = 116;
  return {
    capacityPerSec: 80,
    baseline: { p50Ms: 52.2, p99Ms: 54 },
    ratePerSec: 240,
    summary: {
      requests: 240,
      durationMs: 1000,
      counts,
      servedP50Ms: 300,
      heldAtMost: 30,
      heldAtExcess: excess === undefined ? undefined : 24,
      excess,
      maxLagMs: 0,
    },
    recovery: { backAfterMs: 2400, requests: 12 },
    abandoned: { sent: 80, waiting: 76, neverConnected: 0, abandonAfterMs: 104, canaryWaitMs: 10, waitIfServedMs: 950, servedShare },
    settledAfterMs: 0,
  };
}

describe("what the phase past saturation puts in the scenario", () => {
  it("says 503s past 24 held as the queue model's -queue-limit (24 − 4 threads), the others' -max-concurrency", () => {
    expect(overloadScenario(findings("shed", 0.9), QUEUE, DATE).settings).toEqual({ "queue-limit": 20 });
    expect(overloadScenario(findings("shed", 0.9), EXPONENTIAL, DATE).settings).toEqual({ "max-concurrency": 24 });
  });

  it("says a service that drops what its clients left with -cancel-on-disconnect, and nothing where it could not tell", () => {
    expect(overloadScenario(findings(undefined, 0.01), QUEUE, DATE).settings).toEqual({ "cancel-on-disconnect": true });
    expect(overloadScenario(findings(undefined, 0.9), QUEUE, DATE).settings).toEqual({});
    expect(overloadScenario(findings(undefined, undefined), QUEUE, DATE).settings).toEqual({});
  });

  it("says excess dropped by connect timeouts as -shed-with drop, and the queue's listen backlog as the places held", () => {
    expect(overloadScenario(findings("connect-timeout", 0.9), QUEUE, DATE).settings).toEqual({
      "queue-limit": 20,
      "shed-with": "drop",
      backlog: 20,
    });
    expect(overloadScenario(findings("connect-timeout", 0.9), EXPONENTIAL, DATE).settings).toEqual({
      "max-concurrency": 24,
      "shed-with": "drop",
    });
  });

  it("says refused connections as a 503, and that it is an approximation", () => {
    const scenario = overloadScenario(findings("refused", 0.9), QUEUE, DATE);
    expect(scenario.settings).toEqual({ "queue-limit": 20 });
    expect(overloadScenarioLines(scenario)).toEqual([
      "past saturation in the scenario: queue-limit: 20",
      "past saturation, approximated: past 24 requests held, it refused the excess connections, modelled as a 503: both fail at once",
    ]);
  });

  it("writes a scenario file that ./sim reads back: the flags in system, the record under measured", async () => {
    const overload = overloadScenario(findings("shed", 0.01), QUEUE, DATE);
    const text = scenarioYaml({
      probed: "http://127.0.0.1:1/",
      url: "http://127.0.0.1:1/",
      date: DATE,
      spec: QUEUE,
      summary: "queue",
      errorRate: 0,
      timeoutMs: 2000,
      load: { arrivals: "closed", clients: 200, lambda: 5 },
      overload,
    });
    const scenario = await parseScenario(text, "probed.yaml", SIM_TARGET);
    expect(scenario.tokens).toEqual(expect.arrayContaining(["-queue-limit=20", "-cancel-on-disconnect=true"]));
    expect(scenario.metadata.measured).toEqual({
      date: "2026-11-28T12:00:00.000Z",
      capacity: 80,
      "baseline-p50": "52.2ms",
      "overload-rate": 240,
      "overload-requests": 240,
      served: 100,
      shed: 116,
      errors: 0,
      "held-past-timeout": 24,
      "connect-timeout": 0,
      refused: 0,
      reset: 0,
      "probe-limit": 0,
      "held-at-most": 30,
      "held-at-excess": 24,
      recovery: "2.4s",
      "work-for-nobody": 0.01,
    });
  });

  it("names a mistyped key of measured, with its line", async () => {
    const text = "scenario: 1\nmeasured:\n  date: today\n  capacty: 80\n";
    await expect(parseScenario(text, "probed.yaml", SIM_TARGET)).rejects.toThrow(/^probed\.yaml:4: .*capacty/);
  });
});

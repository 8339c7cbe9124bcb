import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import type { StepMeasure } from "../../../../src/probe/fit/step-measure.ts";
import { probeOverload } from "../../../../src/probe/overload/overload.ts";
import { overloadScenario } from "../../../../src/probe/overload/settings.ts";
import { type RunningServer, startHttpServer } from "../../../../src/server/http-server.ts";
import { serverModelOf } from "../../../../src/config/server-system.ts";
import { parseServerArgs, resolveServerOptions } from "../../../../src/options/server.ts";

/*
 * The phase past saturation against the real HTTP server with the queue model on a virtual clock
 * that never moves: its 4 threads and 20 places in the queue fill, nothing is ever served, and
 * every request past those 24 is answered 503 at once. What the probe measures is then exact,
 * whatever the machine's speed.
 */

const started: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

/** The steps a probe of 4 threads × 50 ms would have measured: 20 req/s at capacity (rounded down, to keep the phase short). */
const STEPS: StepMeasure[] = [1, 4, 8].map((concurrency) => ({
  concurrency,
  throughputPerSec: Math.min(concurrency, 4) * 5,
  meanLatencyMs: 50,
  p50Ms: 50,
  p90Ms: 50,
  p99Ms: 60,
  requests: 100,
  errors: 0,
}));

describe("the phase past saturation, against a server that sheds past 24 held", () => {
  it("counts 24 held and the rest shed, never back at baseline, and writes -queue-limit 20 for 4 threads", async () => {
    const parsed = parseServerArgs(["-model", "queue", "-threads", "4", "-queue-limit", "20", "-listen", "127.0.0.1:0", "-seed", "1"]);
    if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
    const options = resolveServerOptions(parsed.values);
    const server = await startHttpServer(options, new ManualClock());
    started.push(server);
    const lines: string[] = [];
    const findings = await probeOverload(
      new URL(`http://127.0.0.1:${server.address.port}/api`),
      STEPS,
      { factor: 3, durationMs: 1000, maxRequests: 1000, settleMs: 300, maxRatePerSec: 5000, timeoutMs: 1200, maxBodyBytes: 1024 },
      { write: (text: string) => lines.push(text) },
      new AbortController().signal,
    );
    if (findings === undefined) throw new Error("the phase was not stopped: it has findings");
    expect(findings.ratePerSec).toBe(60);
    expect(findings.summary.requests).toBe(60);
    expect(findings.summary.counts).toMatchObject({ served: 0, timeout: 24, shed: 36, "connect-timeout": 0, refused: 0, reset: 0 });
    expect(findings.summary.excess).toBe("shed");
    expect(findings.summary.heldAtExcess).toBe(24);
    expect(findings.recovery).toMatchObject({ backAfterMs: undefined, notBackBy: "wait" });
    expect(findings.abandoned).toBeUndefined();
    expect(lines.join("")).toMatch(/^work for nobody: not measured: the service was not back at its baseline/m);
    expect(overloadScenario(findings, serverModelOf(options), new Date()).settings).toEqual({ "queue-limit": 20 });
  });
});

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  demo,
  expectPeakAgrees,
  type Phases,
  phaseFlags,
  readSummary,
  reportDir,
  SCALED_CLIENT,
  simulated,
} from "../helpers/demo-experiment.ts";
import { isRunning } from "../helpers/processes.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/**
 * The experiment scaled down (test/helpers/demo-experiment.ts), with a 4 s outage: fixed
 * retry still collapses (it does after about 2 s of outage), and the reference backoff
 * queues a couple of hundred. Its clients come back 7–17 s after the resume depending on
 * the seed (simulated, seeds 1–30); the seed is pinned to the quickest (7 s in the
 * simulator, 9.5 s measured on a loaded machine) and 14 s observed. Five seconds of
 * steady load: the client's worker threads start within them, and the rest give the baseline.
 * (The article's own formula collapses like fixed retry; the full-size runs of the README
 * compare every strategy, and `npm run validate` the fleet-level protections.)
 */
const PHASES: Phases = { steadyS: 5, outageS: 4, observeS: 14 };
const SEED = ["-seed", "8"];

describe("npm run demo", () => {
  it(
    "shows fixed retry collapsing and -exponential-backoff recovering, with a report, as the simulator predicts",
    { timeout: 175_000 },
    async () => {
      const out = temporaryDir("thundering-herd-demo-");
      const run = demo([
        ...phaseFlags(PHASES),
        "-client-args",
        [...SCALED_CLIENT, ...SEED].join(" "),
        "-strategies",
        "fixed,exponential-backoff",
        "-out",
        out,
      ]);
      expect(await run.exited).toBe(0);
      const dir = reportDir(run);
      const summary = readSummary(dir);
      const [fixed, backoff] = summary.results;
      const allMeasured = JSON.stringify(summary.results);
      expect(fixed?.strategy).toBe("fixed");
      expect(fixed?.metrics.verdict, allMeasured).toBe("collapsed");
      expect(fixed?.metrics.peakConcurrencyAfterResume).toBeGreaterThan(1_000);
      expect(fixed?.metrics.serverRecoveryMs).toBeNull();
      expect(fixed?.metrics.outageAmplification).toBeGreaterThan(2);
      expect(backoff?.strategy).toBe("exponential-backoff");
      expect(backoff?.metrics.verdict, allMeasured).toBe("recovered");
      expect(backoff?.metrics.clientRecoveryMs).toBeGreaterThan(0);

      // The simulator, run on the same scenario, agrees with what the real programs did.
      const predicted = await simulated("fixed,exponential-backoff", PHASES, SEED);
      for (const measured of summary.results) {
        const simulatedMetrics = predicted.get(measured.strategy)!;
        expect(
          simulatedMetrics.verdict,
          `${measured.strategy}: ${JSON.stringify(simulatedMetrics)} vs ${JSON.stringify(measured.metrics)}`,
        ).toBe(measured.metrics.verdict);
        expectPeakAgrees(simulatedMetrics, measured.metrics, measured.strategy);
      }
      for (const file of [
        "report.html",
        "fixed.svg",
        "exponential-backoff.svg",
        "fixed.server.jsonl",
        "exponential-backoff.client.jsonl",
      ]) {
        expect(existsSync(join(dir, file))).toBe(true);
      }
      const html = readFileSync(join(dir, "report.html"), "utf8");
      expect(html).toContain("<svg");
      // Self-contained: scripts and styles inline, nothing fetched (the one address is uPlot's licence banner).
      expect(html).not.toMatch(/<script[^>]*\ssrc=|<link[^>]*\shref=|https?:\/\/(?!www\.w3\.org|github\.com\/leeoniya\/uPlot)/);
      expect(html.match(/<table class="comparison">[\s\S]*?<\/table>/)?.[0].match(/<tr>/g)).toHaveLength(3);
      expect(run.stdoutLines.join("\n")).toMatch(/fixed\s+collapsed/);
      expect(run.stdoutLines.join("\n")).toMatch(/exponential-backoff\s+recovered/);
      // Every program the runner started is gone.
      // (The stop and the resume name the server's pid again.)
      const pids = new Set(run.stderrLines.flatMap((line) => [...line.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]))));
      expect(pids.size).toBe(4);
      for (const pid of pids) expect(isRunning(pid)).toBe(false);
    },
  );

  it("stops the server and client it started when interrupted, and exits 130", { timeout: 60_000 }, async () => {
    const out = temporaryDir("thundering-herd-demo-");
    const run = demo(["-steady", "30s", "-client-args", "-clients 50", "-out", out]);
    const started = await run.waitForLine(/server pid \d+, client pid \d+/, { stream: "stderr", timeoutMs: 30_000 });
    const [serverPid, clientPid] = [...started.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
    expect(isRunning(serverPid!)).toBe(true);
    run.signal("SIGINT");
    expect(await run.exited).toBe(130);
    expect(isRunning(serverPid!)).toBe(false);
    expect(isRunning(clientPid!)).toBe(false);
    expect(run.stderrLines.join("\n")).toContain("interrupted");
  });
});

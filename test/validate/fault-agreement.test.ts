import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { demo, readSummary, reportDir, SCALED_CLIENT } from "../helpers/demo-experiment.ts";
import { serverLines } from "../helpers/output-lines.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * Validation, not a correctness test: the simulator against the real programs on the queue
 * model, one fault of each kind, 22 s each, one after another (`npm run validate`; not part
 * of `npm test`). That each fault works on the wire is tested in test/e2e/faults.test.ts.
 * Compared: the verdict, and the most requests in the server over the run (the fault's
 * peak: the steady state holds a handful), within ±30 %.
 */

/** A thread pool of 400 req/s, four times the scaled herd's ~100 req/s. */
const QUEUE_SERVER = ["-model", "queue", "-threads", "8", "-service-time", "20ms"];
const SEED = ["-seed", "1"];
const RUN_S = 22;

/** Each case far from its verdict's edge in the simulator (seeds 1-3), and with a peak well above the steady state's. */
const CASES: { faults: string; verdict: string }[] = [
  { faults: "stop@4s+6s", verdict: "collapsed" },
  { faults: "crash@4s+6s", verdict: "recovered" },
  { faults: "capacity@4s+6s*0.1", verdict: "collapsed" },
  { faults: "slow@4s+6s*5", verdict: "collapsed" },
  { faults: "errors@4s+6s*0.9", verdict: "recovered" },
  { faults: "spike@4s+6s*5", verdict: "collapsed" },
];

const lastEndS = (faults: string) => {
  const [, at, length] = /@(\d+)s\+(\d+)s/.exec(faults)!;
  return Number(at) + Number(length);
};

/** The simulator on the same scenario: its verdict and the most in the server over the run. */
async function simulated(faults: string): Promise<{ verdict: string; peak: number }> {
  const sim = spawnCli("sim", [
    ...["-strategies", "fixed", ...SCALED_CLIENT, ...SEED, ...QUEUE_SERVER],
    ...["-faults", faults, "-duration", `${RUN_S}s`, "-json"],
  ]);
  expect(await sim.exited, sim.stderrLines.join("\n")).toBe(0);
  const objects = sim.stdoutLines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
  const peak = Math.max(...objects.filter((one) => one.source === "server").map((one) => one.peakConcurrency as number));
  const summary = objects.find((one) => one.metrics !== undefined) as { metrics: { verdict: string } };
  return { verdict: summary.metrics.verdict, peak };
}

describe("the simulator against the real programs, on the queue model", () => {
  it("agrees on each fault kind: the verdict, and the peak in the server within ±30 %", { timeout: 600_000 }, async () => {
    const figures: string[] = [];
    for (const { faults, verdict } of CASES) {
      const out = temporaryDir("thundering-herd-demo-");
      const run = demo([
        ...["-faults", faults, "-observe", `${RUN_S - lastEndS(faults)}s`, "-strategies", "fixed", "-out", out],
        ...["-server-args", [...QUEUE_SERVER, ...SEED].join(" "), "-client-args", [...SCALED_CLIENT, ...SEED].join(" ")],
      ]);
      expect(await run.exited, run.stderrLines.join("\n")).toBe(0);
      const dir = reportDir(run);
      const [measured] = readSummary(dir).results;
      const measuredPeak = Math.max(
        ...serverLines(readFileSync(join(dir, "fixed.server.jsonl"), "utf8").split("\n")).map((line) => line.peakConcurrency),
      );
      const predicted = await simulated(faults);
      const both = `${faults}: simulated ${predicted.verdict}, peak ${predicted.peak}; measured ${measured?.metrics.verdict}, peak ${measuredPeak}`;
      figures.push(both);
      console.log(both);
      expect.soft(measured?.metrics.verdict, both).toBe(verdict);
      expect.soft(predicted.verdict, both).toBe(verdict);
      expect.soft(predicted.peak / measuredPeak, both).toBeGreaterThan(0.7);
      expect.soft(predicted.peak / measuredPeak, both).toBeLessThan(1.3);
    }
  });
});

import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
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
import { isGroupRunning, isRunning } from "../helpers/processes.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";
import { freePort, portIsFree } from "../helpers/ports.ts";
import { hasDebianGunicorn } from "../helpers/retrograde-service.ts";
import { runTogether } from "../helpers/run-together.ts";

/**
 * The experiment scaled down (test/helpers/demo-experiment.ts), with a 4 s outage: fixed
 * retry still collapses (it does after about 2 s of outage), and the reference backoff
 * queues a couple of hundred. Its waits grow from e x the think time (2 s on average) and
 * are capped here at 3 s (-max-delay, read by exponential-backoff only; the reference's 5 min
 * cap never binds in a run this short): uncapped, the unlucky clients that failed twice wait
 * ~15 s and the clients come back 7–17 s after the resume depending on the seed, which
 * needed 14 s of observation. Capped, with these phases (3 s steady, 4 s outage, 4 s observed)
 * the simulator puts the clients back 2–3 s after the resume for every seed of 1–30 (26 at 2 s,
 * 4 at 3 s; measured: 1.3–1.6 s), and "clients back" needs the window after that one good too,
 * which 4 s observed holds for the slowest; fixed retry collapsed for all 30, its peak after
 * the resume about 2 500 (asserted above 1 000), its outage amplification above 2 as asserted
 * (with 5 s observed: 2.21–2.97, peaks 2 770–2 990). Three seconds of steady load: the client's worker thread
 * starts within the first window, which the baseline leaves out, and the other two give the
 * baseline. (With 4 s steady and 6 s observed, as before: amplification 2.12–2.96, peak
 * 3 166–3 391, clients back 2–3 s, all 30 seeds alike; a 3 s outage takes fixed retry's
 * amplification down to 1.94.)
 * (The article's own formula collapses like fixed retry; the full-size runs of the README
 * compare every strategy, and `npm run validate` the fleet-level protections.)
 */
const PHASES: Phases = { steadyS: 3, outageS: 4, observeS: 4 };
const SEED = ["-seed", "8"];
const BACKOFF_CAP = ["-max-delay", "3s"];

/** The article's experiment, scaled: repeated once where a client fell behind (below). */
async function articleExperiment() {
  const experiment = async () => {
    const out = temporaryDir("thundering-herd-demo-");
    const run = demo([
      ...phaseFlags(PHASES),
      "-client-args",
      [...SCALED_CLIENT, ...SEED, ...BACKOFF_CAP].join(" "),
      "-strategies",
      "fixed,exponential-backoff",
      "-out",
      out,
    ]);
    expect(await run.exited).toBe(0);
    const dir = reportDir(run);
    return { run, dir, summary: readSummary(dir) };
  };
  // A run whose client fell behind (verdict invalid) says nothing about the server, by the
  // demo's own rule: on a busy machine the fixed storm can delay the client's timers just past
  // the limit. Such an experiment is repeated once; any verdict it does give must be right.
  const first = await experiment();
  return first.summary.results.some((result) => result.metrics.verdict === "invalid") ? experiment() : first;
}

describe("npm run demo", () => {
  /*
   * The article's experiment on ./server, and the same on a real service the demo starts itself
   * (-target), side by side: the services mostly wait (gunicorn's workers sleep), and the suite's
   * four minutes have no room for the two in turn.
   */
  const runs = runTogether(
    {
      article: articleExperiment,
      targetAsItComes: () => onGunicorn([], GUNICORN_MODEL),
      targetSmallBacklog: () => onGunicorn(["--backlog", "16"], [...GUNICORN_MODEL, ...SMALL_BACKLOG_MODEL]),
    },
    { timeoutMs: 240_000 },
  );

  it(
    "shows fixed retry collapsing and -exponential-backoff recovering, with a report, as the simulator predicts",
    { timeout: 175_000 },
    async () => {
      const { run, dir, summary } = runs("article");
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
      // The steady phase holds whole windows: the demo anchors the client's window grid on the run's start and reads
      // the windows on their slots, so the baseline is the 2nd and 3rd of the three 1 s windows before the stop (the
      // first left out as a warm-up). Anchored on the client's own start, after its threads came up, or read as the
      // windows closed (a few ms after their slots), the 3rd ended just after the stop and the baseline was one window.
      for (const result of summary.results) {
        const windows = readFileSync(join(dir, `${result.strategy}.client.jsonl`), "utf8")
          .split("\n")
          .filter((line) => line.includes('"okPerSec"'))
          .map((line) => (JSON.parse(line) as { okPerSec: number }).okPerSec);
        expect(result.metrics.baselineOkPerSec, `${result.strategy}: windows ${windows.slice(0, 4).join(", ")}`).toBeCloseTo(
          (windows[1]! + windows[2]!) / 2,
          6,
        );
      }

      // The simulator, run on the same scenario, agrees with what the real programs did.
      // (The simulator checks a parameter flag against its -strategy, fixed unless named, before
      // -strategies gives each strategy only the flags it reads: so it is named here.)
      const predicted = await simulated("fixed,exponential-backoff", PHASES, [...SEED, "-strategy", "exponential-backoff", ...BACKOFF_CAP]);
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

  /*
   * demo -target on a real service the demo starts itself (-target-cmd): Debian's gunicorn, 4 sync
   * workers of 50 ms (test/fixtures/sleeper/app.py), its process group stopped for 4 s under 200
   * users thinking 5 s with a 1 s timeout and fixed retry. As it comes, its listen backlog (2048)
   * fills with work whose clients have gone, which it serves after the resume while the retries
   * pile up: it does not come back. With --backlog 16 the kernel drops the excess SYNs, nothing
   * stale is left, and it comes back within seconds: the difference docs/real-services.md shows
   * the probe measuring and the simulator predicting (the probe.test.ts runs past saturation).
   */
  describe("-target: the crash experiment on a service of yours", () => {
    it("gunicorn as it comes, stopped with its workers, does not come back under fixed retry: collapsed, by its watcher", () => {
      const { code, output, summary } = runs("targetAsItComes");
      expect(code, output).toBe(0);
      expect(output).toMatch(/^demo: fixed: stop: SIGSTOP to the target \(process group \d+\)$/m);
      const fixed = summary!.results[0]!;
      expect(fixed.metrics.verdict, output).toBe("collapsed");
      expect(fixed.metrics.serverRecoveryMs, output).toBeNull();
      expect(output).toMatch(/service not back at baseline \(3 answers in a row within \S+\) by the watcher's last answer/);
      // The simulator, on the model the probe writes for it, predicts the same, beside it in the table.
      expect(output).toMatch(/^demo: fixed: the simulator predicts collapsed for the same scenario/m);
      expect(output).toMatch(/^fixed \(simulator\)\s+collapsed/m);
    });

    it("with --backlog 16 it comes back: its watcher sees it at baseline again, and the verdict says the server is back", () => {
      const { code, output, summary } = runs("targetSmallBacklog");
      expect(code, output).toBe(0);
      const fixed = summary!.results[0]!;
      // Its clients come back within seconds more (4.1 s after the resume in a run observed 10 s): recovered or, cut short, recovering.
      expect(["recovered", "recovering"], output).toContain(fixed.metrics.verdict);
      expect(fixed.metrics.serverRecoveryMs, output).toBeGreaterThanOrEqual(0);
      expect(output).toMatch(/service back at baseline \(3 answers in a row within \S+\) [\d.]+ s after resume/);
      // So does the simulator, on the model with the excess dropped past 21 held.
      expect(output).toMatch(/^demo: fixed: the simulator predicts recover(ed|ing) for the same scenario \(server back \S+s,/m);
    });

    it("leaves nothing running: the target's whole process group and the client are gone, the port free", async () => {
      for (const name of ["targetAsItComes", "targetSmallBacklog"] as const) {
        const { run, port } = runs(name);
        const text = run.stderrLines.join("\n");
        const groups = new Set([...text.matchAll(/process group (\d+)/g)].map((match) => Number(match[1])));
        const pids = new Set([...text.matchAll(/client pid (\d+)/g)].map((match) => Number(match[1])));
        expect([groups.size, pids.size], text).toEqual([1, 1]);
        for (const group of groups) expect(isGroupRunning(group), `process group ${group}`).toBe(false);
        for (const pid of pids) expect(isRunning(pid), `pid ${pid}`).toBe(false);
        expect(await portIsFree(port)).toBe(true);
      }
    });
  });

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

/*
 * 11 s observed: with --backlog 16 the service was back 2.7 s after the resume by hand, but 4.3 to 6.9 s
 * after a 20 s stop under fixed retry in docs/real-services.md's runs, and a run observed 6 s was judged collapsed once
 * at load 2 (not back by the watcher's last answer, 5.6 s after the resume). The article's experiment
 * beside them (two strategies of 11 s) still ends last.
 */
const TARGET_PHASES: Phases = { steadyS: 3, outageS: 4, observeS: 11 };
const TARGET_CLIENT = ["-clients", "200", "-lambda", "5", "-timeout", "1s", "-interval", "1s", "-seed", "3"];
const APP_DIR = resolve(import.meta.dirname, "../fixtures/sleeper");

/**
 * The models the simulator predicts them with, as probe writes them for these services
 * (docs/real-services.json): 4 threads of 50 ms, and with --backlog 16 a queue of 17 past which
 * connections are dropped (shed-with drop), which is also all its kernel holds while stopped.
 */
const GUNICORN_MODEL = ["-model", "queue", "-threads", "4", "-service-time", "50ms"];
const SMALL_BACKLOG_MODEL = ["-queue-limit", "17", "-shed-with", "drop", "-backlog", "17"];

async function onGunicorn(args: readonly string[], model: readonly string[]) {
  expect(hasDebianGunicorn(), "needs Debian's gunicorn: apt-get install python3-gunicorn").toBe(true);
  const port = await freePort();
  const command = `exec /usr/bin/python3 -m gunicorn -w 4 -b 127.0.0.1:${port} -e SLEEP_MS=50 ${args.join(" ")} --chdir ${APP_DIR} app:application`;
  const out = temporaryDir("thundering-herd-demo-target-");
  const run = demo([
    ...phaseFlags(TARGET_PHASES),
    ...["-target", `http://127.0.0.1:${port}/`, "-target-cmd", command],
    ...["-strategies", "fixed", "-client-args", TARGET_CLIENT.join(" "), "-server-args", model.join(" "), "-out", out],
  ]);
  const code = await run.exited;
  const output = [...run.stderrLines, ...run.stdoutLines].join("\n");
  return { code, run, output, port, summary: code === 0 ? readSummary(reportDir(run)) : undefined };
}

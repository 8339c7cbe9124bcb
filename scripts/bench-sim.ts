/**
 * `npm run bench -- sim`: how fast the simulator advances virtual time, and whether the
 * full-size scenario fits the targets: one million clients for ten minutes of virtual
 * time with a 20 s outage in at most 40 s of wall time and 2 GB of memory; then how much
 * the worker threads gain on independent runs (-strategies all, -parallel 1 against
 * every core), whose output must be byte-identical. Prints figures; asserts nothing. Each run is a `./sim` child, stopped by its own pid (and group) when it
 * runs over its time limit, on failure, or on Ctrl-C.
 *
 * The full-size scenario is the article's scaled by 1000 (limit 30 000, K 15 000), so the
 * server is not swamped at baseline; the mid-size one is scaled by 100.
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { memoryMb } from "./proc-usage.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const TARGET_EVENTS_PER_SEC = 3e6;
const TARGET_WALL_S = 40;
const TARGET_PEAK_MB = 2048;
/** A run still going after this long is stopped: the figure is then only "over the limit". */
const RUN_LIMIT_MS = 5 * 60_000;
/** How often the child's peak resident memory (VmHWM) is read. */
const MEMORY_POLL_MS = 100;

const running = new Set<ChildProgram>();
process.on("SIGINT", () => {
  for (const program of running) program.kill();
  process.exit(130);
});

interface SimRun {
  /** From spawn to exit, startup included. */
  wallS: number;
  /** The simulation alone, as the simulator reports it. */
  simulateS: number | undefined;
  events: number | undefined;
  peakMb: number;
  outcome: string;
  stdout: string;
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

async function runSim(args: readonly string[]): Promise<SimRun> {
  const started = performance.now();
  const sim = new ChildProgram("sim", resolve(REPO_ROOT, "sim"), args, { cwd: REPO_ROOT });
  running.add(sim);
  let peakMb = 0;
  let timedOut = false;
  try {
    const finished = sim.exited.then(() => true);
    while (!(await Promise.race([finished, sleep(MEMORY_POLL_MS).then(() => false)]))) {
      try {
        // NaN once the process has exited and is a zombie (no Vm* lines left).
        const { peakMb: now } = memoryMb(sim.pid);
        if (Number.isFinite(now)) peakMb = Math.max(peakMb, now);
      } catch {
        // exited between the checks
      }
      if (performance.now() - started > RUN_LIMIT_MS) {
        timedOut = true;
        break;
      }
    }
  } finally {
    await sim.stop();
    running.delete(sim);
  }
  const wallS = (performance.now() - started) / 1000;
  // "sim: fixed: 128413020 events in 803.90 s (0.16 million/s)"
  const line = sim.stderr.map((entry) => entry.text).find((text) => / events in [\d.]+ s /.test(text));
  const match = line === undefined ? null : /: (\d+) events in ([\d.]+) s /.exec(line);
  const exit = await sim.exited;
  return {
    wallS,
    simulateS: match === null ? undefined : Number(match[2]),
    events: match === null ? undefined : Number(match[1]),
    peakMb,
    outcome: timedOut ? `stopped after ${RUN_LIMIT_MS / 1000} s` : exit === 0 ? "ok" : `exit ${exit}${sim.said()}`,
    stdout: sim.stdout.map((entry) => entry.text).join("\n"),
  };
}

const millions = (value: number | undefined, digits = 2) => (value === undefined ? "?" : (value / 1e6).toFixed(digits));
const perSecond = (run: SimRun) => (run.events === undefined || run.simulateS === undefined ? undefined : run.events / run.simulateS);
const verdict = (ok: boolean) => (ok ? "meets" : "misses");

async function main(): Promise<void> {
  const midArgs = ["-clients", "100000", "-limit", "3000", "-k", "1500", "-duration", "10m", "-quiet"];
  process.stdout.write(
    `simulator benchmark: targets >= ${TARGET_EVENTS_PER_SEC / 1e6} million events/s; 1M clients x 10 min in <= ${TARGET_WALL_S} s and <= ${TARGET_PEAK_MB} MB\n\n` +
      `mid-size: ./sim ${midArgs.join(" ")}\n` +
      "strategy             events (M)  simulate s  events/s (M)  wall s  peak MB  target\n",
  );
  for (const strategy of [[], ["-exponential-backoff"]]) {
    const run = await runSim([...midArgs, ...strategy]);
    const rate = perSecond(run);
    process.stdout.write(
      `${(strategy[0]?.slice(1) ?? "fixed").padEnd(19)}  ${millions(run.events).padStart(10)}  ${run.simulateS?.toFixed(2).padStart(10) ?? "         ?"}  ` +
        `${millions(rate).padStart(12)}  ${run.wallS.toFixed(1).padStart(6)}  ${run.peakMb.toFixed(0).padStart(7)}  ` +
        `${rate === undefined ? run.outcome : `${verdict(rate >= TARGET_EVENTS_PER_SEC)} ${TARGET_EVENTS_PER_SEC / 1e6}M/s`}\n`,
    );
  }

  const fullArgs = ["-clients", "1000000", "-limit", "30000", "-k", "15000", "-duration", "10m", "-quiet"];
  process.stdout.write(
    `\nfull size: ./sim ${fullArgs.join(" ")} (outage at 15 s for 20 s)\n` +
      "strategy             wall s  simulate s  events (M)  events/s (M)  peak MB  target\n",
  );
  for (const strategy of [[], ["-exponential-backoff"]]) {
    const run = await runSim([...fullArgs, ...strategy]);
    const ok = run.outcome === "ok" && run.wallS <= TARGET_WALL_S && run.peakMb <= TARGET_PEAK_MB;
    process.stdout.write(
      `${(strategy[0]?.slice(1) ?? "fixed").padEnd(19)}  ${run.wallS.toFixed(1).padStart(6)}  ${run.simulateS?.toFixed(2).padStart(10) ?? "         ?"}  ` +
        `${millions(run.events).padStart(10)}  ${millions(perSecond(run)).padStart(12)}  ${run.peakMb.toFixed(0).padStart(7)}  ` +
        `${run.outcome === "ok" ? `${verdict(ok)} ${TARGET_WALL_S} s / ${TARGET_PEAK_MB} MB` : run.outcome}\n`,
    );
  }
}

/** Independent runs on worker threads: every strategy at mid size, in one thread and on every core. */
async function parallelRuns(): Promise<void> {
  const args = ["-clients", "100000", "-limit", "3000", "-k", "1500", "-duration", "10m", "-quiet", "-strategies", "all"];
  process.stdout.write(`\nindependent runs: ./sim ${args.join(" ")} -parallel N\n` + "parallel  wall s  peak MB  speed-up  stdout\n");
  const sequential = await runSim([...args, "-parallel", "1"]);
  const cores = availableParallelism();
  const parallel = await runSim([...args, "-parallel", String(cores)]);
  for (const [threads, run] of [
    [1, sequential],
    [cores, parallel],
  ] as const) {
    process.stdout.write(
      `${String(threads).padStart(8)}  ${run.wallS.toFixed(1).padStart(6)}  ${run.peakMb.toFixed(0).padStart(7)}  ` +
        `${(sequential.wallS / run.wallS).toFixed(2).padStart(7)}x  ${run.outcome !== "ok" ? run.outcome : run.stdout === sequential.stdout ? "identical" : "DIFFERENT"}\n`,
    );
  }
}

await main();
await parallelRuns();

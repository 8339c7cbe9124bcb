/**
 * `npm run bench -- choose`: what one simulation costs, then `thundering-herd choose`'s default run
 * (the article's system: the client grid, the server's levers, the stability seeds) on every core,
 * this checkout beside the commit issue 37 measured (a git worktree sharing node_modules), in
 * alternating pairs: wall time and peak memory (GNU time), the ratio against its goal, the 16-core
 * goals where there are 16 cores, and whether the progress lines say how long is left. Prints
 * figures, met or missed; asserts nothing. Each run is a child process stopped by its own pid (and
 * group) when it runs over its limit, on failure, or on Ctrl-C; the worktree is removed after.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { baselineCheckout, removeOpenCheckouts } from "./baseline-checkout.ts";
import { buildGrid, measurePlan } from "../src/recommend/grid-measure.ts";
import { longestSurvived, outageRun } from "../src/recommend/measure.ts";
import { parseChooseArgs } from "../src/options/choose.ts";
import { median } from "../src/model/percentile.ts";
import { serverIsBack } from "../src/model/verdict.ts";
import { simValuesFor } from "../src/recommend/settings.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { simulationConfigFrom } from "../src/config/simulation.ts";
import { simulate } from "../src/runner/simulate.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const RUN_LIMIT_MS = 10 * 60_000;

let running: ChildProgram | undefined;
process.on("SIGINT", () => {
  running?.kill();
  removeOpenCheckouts();
  process.exit(130);
});

/** The median wall time of `repeat` calls of `run`, in ms. */
function timed(run: () => unknown, repeat = 5): number {
  run(); // warm-up
  const times = Array.from({ length: repeat }, () => {
    const started = performance.now();
    run();
    return performance.now() - started;
  }).sort((a, b) => a - b);
  return times[Math.floor(repeat / 2)]!;
}

function oneSimulation(): void {
  const plan = { steadyMs: 15_000, observeMs: 90_000 };
  const rows: [string, () => unknown][] = [];
  for (const strategy of ["fixed", "exponential-backoff", "full-jitter"]) {
    const config = simulationConfigFrom(simValuesFor({}, { strategy }));
    rows.push([`${strategy}: everyday run, 2 min`, () => simulate({ ...config, outages: [], durationMs: 120_000 })]);
    for (const outageMs of [5_000, 20_000, 60_000]) {
      rows.push([`${strategy}: ${outageMs / 1000} s outage + 105 s`, () => outageRun(config, 1, plan, outageMs)]);
    }
  }
  process.stdout.write("one simulation (the article's system, 1000 users), median of 5, in this process:\n");
  for (const [label, run] of rows) process.stdout.write(`  ${label.padEnd(40)} ${timed(run).toFixed(1).padStart(7)} ms\n`);
}

/** The commit whose default run issue 37 measured (33.7 s on a quiet 2-core machine), run beside this one. */
const BASELINE = "de36db7";
/** choose's default run (levers and stability included) at most this share of the baseline's wall time, on the same machine. */
const RATIO_GOAL = 0.25;
/** On a 16-core machine: at most this wall time and this peak memory. */
const MANY_CORES = { cores: 16, wallS: 5, rssMb: 1024 } as const;
const PAIRS = 3;

interface Timed {
  readonly wallS: number;
  /** Peak resident memory of the run (its worker threads are in the process), from GNU time; undefined without it. */
  readonly rssMb: number | undefined;
  readonly saysTimeLeft: boolean;
}

/** choose's default run in `dir` (a checkout), under GNU time when there is one; undefined when it failed. */
async function defaultRun(dir: string, label: string): Promise<Timed | undefined> {
  const out = mkdtempSync(join(tmpdir(), "thundering-herd-bench-choose-"));
  const command = [process.execPath, "--import", "./src/register-tsx.mjs", "src/bin/choose.ts", "-out", out];
  const time = existsSync("/usr/bin/time");
  const started = performance.now();
  const child = time
    ? new ChildProgram(label, "/usr/bin/time", ["-f", "bench-time %e %M", ...command], { cwd: dir })
    : new ChildProgram(label, command[0]!, command.slice(1), { cwd: dir });
  running = child;
  const limit = setTimeout(() => child.kill(), RUN_LIMIT_MS);
  const exit = await child.exited;
  clearTimeout(limit);
  running = undefined;
  const wallS = (performance.now() - started) / 1000;
  rmSync(out, { recursive: true, force: true });
  if (exit !== 0) {
    process.stdout.write(`  ${label}: failed (${exit})${child.said()}\n`);
    return undefined;
  }
  const measured = child.stderr.map((line) => /^bench-time ([\d.]+) (\d+)$/.exec(line.text)).find((match) => match !== null);
  return {
    wallS: measured === undefined ? wallS : Number(measured[1]),
    rssMb: measured === undefined ? undefined : Number(measured[2]) / 1024,
    saysTimeLeft: child.stderr.some((line) => / s left$/.test(line.text)),
  };
}

const medianRss = (runs: readonly Timed[]) =>
  runs.every((run) => run.rssMb !== undefined) ? median(runs.map((run) => run.rssMb!))! : undefined;
const megabytes = (value: number | undefined) => (value === undefined ? "-" : `${value.toFixed(0)} MB`);

async function defaultRunAgainstBaseline(): Promise<void> {
  const cores = availableParallelism();
  process.stdout.write(
    `\nchoose's default run (the article's system: the client grid, the server's levers, the stability seeds) on ${cores} cores, ` +
      `this checkout beside ${BASELINE}, ${PAIRS} pairs in alternating order:\n`,
  );
  const baseline = baselineCheckout(BASELINE, (text) => process.stdout.write(text));
  const ours: Timed[] = [];
  const theirs: Timed[] = [];
  try {
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? (["ours", "baseline"] as const) : (["baseline", "ours"] as const);
      for (const side of order) {
        if (side === "baseline" && baseline === undefined) continue;
        const run = await defaultRun(side === "ours" ? REPO_ROOT : baseline!.dir, side === "ours" ? "choose" : `choose at ${BASELINE}`);
        if (run === undefined) return;
        (side === "ours" ? ours : theirs).push(run);
        process.stdout.write(
          `  pair ${pair + 1}, ${side === "ours" ? "this checkout" : BASELINE}: ${run.wallS.toFixed(1)} s, ${megabytes(run.rssMb)}\n`,
        );
      }
    }
  } finally {
    baseline?.remove();
  }
  const wall = median(ours.map((run) => run.wallS))!;
  const rss = medianRss(ours);
  process.stdout.write(`  this checkout: median ${wall.toFixed(1)} s, ${megabytes(rss)}\n`);
  if (theirs.length > 0) {
    const baselineWall = median(theirs.map((run) => run.wallS))!;
    const ratio = wall / baselineWall;
    process.stdout.write(
      `  ${BASELINE}: median ${baselineWall.toFixed(1)} s, ${megabytes(medianRss(theirs))}\n` +
        `  ratio ${ratio.toFixed(2)}x of ${BASELINE}, goal at most ${RATIO_GOAL}x: ${ratio <= RATIO_GOAL ? "met" : "missed"}\n`,
    );
  }
  process.stdout.write(
    cores >= MANY_CORES.cores
      ? `  on ${cores} cores: ${wall.toFixed(1)} s (goal at most ${MANY_CORES.wallS} s: ${wall <= MANY_CORES.wallS ? "met" : "missed"}), ` +
          `${megabytes(rss)} (goal at most ${MANY_CORES.rssMb} MB: ${rss !== undefined && rss <= MANY_CORES.rssMb ? "met" : "missed"})\n`
      : `  the ${MANY_CORES.cores}-core goals (at most ${MANY_CORES.wallS} s and ${MANY_CORES.rssMb} MB): not measured, this machine has ${cores} cores\n`,
  );
  process.stdout.write(
    `  a progress line that says how long is left: ${ours.every((run) => run.saysTimeLeft) ? "met" : "missed"} (choose's stderr, not a terminal)\n`,
  );
}

/**
 * Where a measurement's time goes: one seed of choose's default client grid in this process, one
 * thread, timed by part (the everyday run, the listed outages, the bisection for the longest
 * outage survived), as measure() runs them: the listed outages whole (the first seed's, whose
 * timelines the report draws) and once more ended where the server cannot come back (the other
 * seeds'), the bisection's ended there.
 */
function whereTheTimeGoes(): void {
  const parsed = parseChooseArgs([]);
  if (parsed.kind !== "run") throw new Error("choose's defaults did not parse");
  const options = parsed.options;
  const grid = buildGrid(options, []);
  const plan = measurePlan(options);
  const spent = { everyday: 0, listed: 0, listedHalted: 0, bisection: 0 };
  let listedRuns = 0;
  let bisectionRuns = 0;
  for (const { config } of grid) {
    let started = performance.now();
    simulate({ ...config, seed: 1, outages: [], durationMs: plan.everydayMs }, undefined, { windowHistograms: false });
    spent.everyday += performance.now() - started;
    started = performance.now();
    const listed = plan.outagesMs.map((outageMs) => outageRun(config, 1, plan, outageMs).result);
    listedRuns += listed.length;
    spent.listed += performance.now() - started;
    started = performance.now();
    for (const outageMs of plan.outagesMs) outageRun(config, 1, plan, outageMs, { haltWhenCollapsed: true });
    spent.listedHalted += performance.now() - started;
    started = performance.now();
    longestSurvived(plan, listed, (outageMs) => {
      bisectionRuns++;
      return serverIsBack(outageRun(config, 1, plan, outageMs, { haltWhenCollapsed: true }).result.verdict);
    });
    spent.bisection += performance.now() - started;
  }
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  process.stdout.write(
    `\nwhere the time goes: the default client grid's ${grid.length} candidates, one seed, one thread, in this process:\n` +
      `  everyday runs ${seconds(spent.everyday)} (${grid.length} runs), listed outages ${seconds(spent.listed)} (${listedRuns} runs; ` +
      `${seconds(spent.listedHalted)} ended where the server cannot come back, as for the other seeds), ` +
      `bisection ${seconds(spent.bisection)} (${bisectionRuns} runs, ${(bisectionRuns / grid.length).toFixed(1)} per candidate, ` +
      `${(spent.bisection / Math.max(1, bisectionRuns)).toFixed(1)} ms each)\n`,
  );
}

oneSimulation();
whereTheTimeGoes();
await defaultRunAgainstBaseline();

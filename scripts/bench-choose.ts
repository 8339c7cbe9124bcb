/**
 * `npm run bench -- choose`: the wall time of `thundering-herd choose` on its default grid
 * (the article's system, every candidate, 3 seeds, outages 5s, 20s, 60s) on every core, and
 * the arithmetic behind it: candidates x seeds x simulations per measurement, and what one
 * simulation costs. Prints figures; asserts nothing. The run is a child process stopped by
 * its own pid (and group) when it runs over its limit, on failure, or on Ctrl-C.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { clientGrid } from "../src/choose/candidates.ts";
import { outageRun } from "../src/choose/measure.ts";
import { simValuesFor } from "../src/choose/settings.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { configFrom } from "../src/sim/options.ts";
import { simulate } from "../src/runner/simulate.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
/** The target: the default grid within two minutes on this project's 2-core machine. */
const TARGET_S = 120;
const RUN_LIMIT_MS = 10 * 60_000;

let running: ChildProgram | undefined;
process.on("SIGINT", () => {
  running?.kill();
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
    const config = configFrom(simValuesFor({}, { strategy }));
    rows.push([`${strategy}: everyday run, 2 min`, () => simulate({ ...config, outages: [], durationMs: 120_000 })]);
    for (const outageMs of [5_000, 20_000, 60_000]) {
      rows.push([`${strategy}: ${outageMs / 1000} s outage + 105 s`, () => outageRun(config, 1, plan, outageMs)]);
    }
  }
  process.stdout.write("one simulation (the article's system, 1000 users), median of 5, in this process:\n");
  for (const [label, run] of rows) process.stdout.write(`  ${label.padEnd(40)} ${timed(run).toFixed(1).padStart(7)} ms\n`);
}

async function defaultGrid(): Promise<void> {
  const grid = clientGrid();
  const out = mkdtempSync(join(tmpdir(), "thundering-herd-bench-choose-"));
  const workers = availableParallelism();
  process.stdout.write(
    `\ndefault grid: ${grid.length} candidates x 3 seeds on ${workers} worker threads (thundering-herd choose -client-only -stability-seeds 0 -json)\n`,
  );
  const started = performance.now();
  const child = new ChildProgram(
    "choose",
    process.execPath,
    // The client grid alone, as measured before choose ran the server's levers and the
    // stability seeds by default: those follow it and are timed in docs/choose-article.json.
    ["--import", "./src/register-tsx.mjs", "src/bin/choose.ts", "-client-only", "-stability-seeds", "0", "-json", "-out", out],
    {
      cwd: REPO_ROOT,
    },
  );
  running = child;
  const limit = setTimeout(() => child.kill(), RUN_LIMIT_MS);
  const exit = await child.exited;
  clearTimeout(limit);
  running = undefined;
  const wallS = (performance.now() - started) / 1000;
  rmSync(out, { recursive: true, force: true });
  if (exit !== 0) {
    process.stdout.write(`  failed (${exit})${child.said()}\n`);
    return;
  }
  const result = JSON.parse(child.stdout.map((line) => line.text).join("\n")) as { ranking: { simulations: number }[] };
  const simulations = result.ranking.reduce((sum, entry) => sum + entry.simulations, 0);
  const perCandidateSeed = simulations / (result.ranking.length * 3);
  process.stdout.write(
    `  ${result.ranking.length} candidates, ${simulations} simulations (${perCandidateSeed.toFixed(1)} per candidate and seed: ` +
      `1 everyday, 3 outages, the rest bisection)\n` +
      `  wall time ${wallS.toFixed(1)} s, start-up included; wall time x workers / simulations: ${((wallS * workers * 1000) / simulations).toFixed(0)} ms ` +
      `per simulation (on a shared machine this includes the time other processes took)\n` +
      `  target: at most ${TARGET_S} s: ${wallS <= TARGET_S ? "meets" : "misses"}\n`,
  );
}

oneSimulation();
await defaultGrid();

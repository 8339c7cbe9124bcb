import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { type Browser, launchBrowser } from "../../harness/browser.ts";
import type { SpawnedCli } from "../helpers/spawn-cli.ts";
import { demo, reportDir } from "../helpers/demo-experiment.ts";
import { isRunning } from "../helpers/processes.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * npm run demo with a chain of tiers, scaled down: three real ./server, edge → api → db, the db
 * answering every request 500, three attempts at every layer and no budget. A few users (500
 * thinking 100 s on average: about five requests a second), a 1 s stop of the db (SIGSTOP to its
 * process only) 1 s into a 3 s run (seed 7: 10 user requests; at least 3 asserted). The tiers
 * finish their calls before they stop, so each attempt that reached the edge has become exactly 3
 * attempts at the api and 9 at the db, and each user request that ran to its end 3 at the edge
 * (the users' stop may cut one in flight).
 */
const CHAIN = `scenario: 1
name: Three tiers, the database failing everything
system: {clients: 500, lambda: 100, timeout: 20s}
strategy: {strategy: fixed, max-attempts: 3, simple-backoff-delay: 10ms}
tiers:
  - name: edge
    system: {model: queue, threads: 16, service-time: 1ms}
    upstream: {max-attempts: 3, simple-backoff-delay: 1ms, timeout: 10s}
  - name: api
    system: {model: queue, threads: 16, service-time: 1ms}
    upstream: {max-attempts: 3, simple-backoff-delay: 1ms, timeout: 10s}
  - name: db
    system: {model: queue, threads: 16, service-time: 1ms, error-rate: 1}
faults: ["db:stop@1s+1s"]
run: {duration: 3s}
`;

/** What the report's script exposes for tests: the chart of arrivals per tier of each strategy. */
interface TierCharts {
  tierCharts: { series: { label: string }[] }[];
}
declare const window: TierCharts & {
  dashboard: { runs: { tiers: { name: string; t: number[] }[] }[]; plots: Record<string, { series: { label: string }[] }> };
};

interface TierEntry {
  name: string;
  arrivals: number;
  amplification: number;
  policyAmplification: number;
}

/** What the finished run printed and wrote: the figures per tier, the report, every program gone. */
async function checkRun(run: SpawnedCli, browser: Browser): Promise<void> {
  const stderr = run.stderrLines.join("\n");
  const started = /edge server pid (\d+), api server pid (\d+), db server pid (\d+), client pid (\d+)/.exec(stderr);
  expect(started, stderr).not.toBeNull();
  const [edgePid, apiPid, dbPid, clientPid] = started!.slice(1).map(Number);
  // The fault struck the db's own process.
  expect(stderr).toContain(`stop: SIGSTOP to db server pid ${dbPid}`);
  expect(stderr).toContain(`stop over: SIGCONT to db server pid ${dbPid}`);

  const results = reportDir(run);
  const summary = JSON.parse(readFileSync(join(results, "summary.json"), "utf8")) as {
    results: { strategy: string; users: { requests: number; ok: number; gaveUp: number }; tiers: TierEntry[] }[];
  };
  expect(summary.results.map((result) => result.strategy)).toEqual(["fixed"]);
  const { users, tiers } = summary.results[0]!;
  const measured = JSON.stringify(summary.results[0]);
  expect(users.requests, measured).toBeGreaterThanOrEqual(3);
  expect(users.ok, measured).toBe(0);
  expect(tiers.map((tier) => [tier.name, tier.policyAmplification])).toEqual([
    ["edge", 3],
    ["api", 9],
    ["db", 27],
  ]);
  // Every tier finished its calls before it stopped: each attempt that reached the edge became exactly 3 at the api and 9 at the db.
  const [edge, api, db] = tiers;
  expect(api!.arrivals, measured).toBe(3 * edge!.arrivals);
  expect(db!.arrivals, measured).toBe(9 * edge!.arrivals);
  // The users' own attempts: 3 for each request that ran to its end; the stop of the users may cut a request in flight.
  expect(edge!.arrivals, measured).toBeGreaterThanOrEqual(3 * users.gaveUp);
  expect(edge!.arrivals, measured).toBeLessThanOrEqual(3 * users.requests);
  expect(users.requests - users.gaveUp, measured).toBeLessThanOrEqual(2);
  expect(run.stdoutLines.join("\n")).toMatch(new RegExp(`^db +${db!.arrivals} +${db!.amplification.toFixed(2)}x +[\\d.x-]+ +27x`, "m"));
  const html = readFileSync(join(results, "report.html"), "utf8");
  expect(html.match(/<table class="tiers">[\s\S]*?<\/table>/)?.[0].match(/<tr>/g)).toHaveLength(4);
  expect(html).toContain('<div class="tier-arrivals" data-strategy="0">');
  // In Chromium: the chart of arrivals per tier draws one line per tier, with no script error.
  {
    const { page, errors } = await browser.newPage();
    await page.goto(pathToFileURL(join(results, "report.html")).href);
    await page.waitForFunction(() => window.tierCharts?.length === 1);
    const labels = await page.evaluate(() => window.tierCharts[0]!.series.map((series) => series.label));
    expect(labels).toEqual(["t (s)", "edge", "api", "db"]);
    expect(errors).toEqual([]);
  }
  for (const tier of ["api", "db"])
    expect(readFileSync(join(results, `fixed.${tier}.server.jsonl`), "utf8")).toMatch(/"upstream"|"admitted"/);
  for (const pid of [edgePid!, apiPid!, dbPid!, clientPid!]) expect(isRunning(pid)).toBe(false);
  console.log(`demo tiers: ${users.requests} user requests; ${tiers.map((tier) => `${tier.name} ${tier.arrivals}`).join(", ")}`);
}

describe("npm run demo with a chain of tiers", () => {
  it(
    "runs one real ./server per tier and measures the multiplication: 3, 9 and 27 attempts per user request",
    { timeout: 120_000 },
    async () => {
      const dir = temporaryDir("thundering-herd-demo-tiers-");
      const file = join(dir, "chain.yaml");
      writeFileSync(file, CHAIN);
      // The browser starts while the demo starts its tiers, so that the page is open while the demo
      // runs: its live chart of arrivals per tier.
      const run = demo([file, "-client-args", "-seed 7 -interval 1s", "-out", dir, "-dashboard"]);
      const [browser, dashboardLine] = await Promise.all([
        launchBrowser(),
        run.waitForLine(/^demo: dashboard on http:\/\/127\.0\.0\.1:\d+\/$/, { stream: "stderr", timeoutMs: 30_000 }),
      ]);
      try {
        const url = dashboardLine.replace("demo: dashboard on ", "");
        const live = await browser.newPage();
        await live.page.goto(url);
        await live.page.waitForFunction(() => window.dashboard.runs[0]?.tiers.filter((tier) => tier?.t.length > 0).length === 3, null, {
          timeout: 60_000,
        });
        expect(await run.exited, run.stderrLines.join("\n")).toBe(0);
        const liveTiers = await live.page.evaluate(() => window.dashboard.runs[0]!.tiers.map((tier) => tier.name));
        expect(liveTiers).toEqual(["edge", "api", "db"]);
        const liveLabels = await live.page.evaluate(() => window.dashboard.plots.tiers!.series.map((series) => series.label));
        expect(liveLabels).toEqual(["t (s)", "edge", "api", "db"]);
        expect(live.errors).toEqual([]);
        await checkRun(run, browser);
      } finally {
        await browser.close();
      }
    },
  );

  it("stops every tier's server and the client when interrupted, and exits 130", { timeout: 60_000 }, async () => {
    const dir = temporaryDir("thundering-herd-demo-tiers-");
    const file = join(dir, "chain.yaml");
    writeFileSync(file, CHAIN.replace("duration: 3s", "duration: 60s"));
    const run = demo([file, "-out", dir]);
    const started = await run.waitForLine(/client pid \d+/, { stream: "stderr", timeoutMs: 30_000 });
    const pids = [...started.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
    expect(pids).toHaveLength(4);
    for (const pid of pids) expect(isRunning(pid)).toBe(true);
    run.signal("SIGINT");
    expect(await run.exited).toBe(130);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    expect(run.stderrLines.join("\n")).toContain("interrupted; the servers of every tier and client of the current run were stopped");
  });
});

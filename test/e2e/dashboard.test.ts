import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { faultEvent } from "../../src/dashboard/events.ts";
import { type Dashboard, startDashboard } from "../../src/dashboard/server.ts";
import { VERDICTS } from "../../src/model/verdict.ts";
import { type Browser, launchBrowser } from "../../harness/browser.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";

/** What the page's script exposes for tests (window.dashboard). */
interface PageRun {
  strategy: string;
  phases: { phase: string; atS: number }[];
  server: { points: number };
  client: { t: number[]; ok: number[] };
  verdict?: { verdict: string };
}
declare const window: {
  dashboard: {
    runs: PageRun[];
    plots: Record<string, { data: (number | null)[][]; series: { label: string }[]; ctx: Canvas2d }>;
  };
};
interface Canvas2d {
  canvas: { width: number; height: number };
  getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
}
declare const document: { getElementById(id: string): { dataset: Record<string, string>; textContent: string } | null };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One Chromium for the file (its start is what takes long); each test gets a page of its own, closed after it. */
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
});

async function browserPage() {
  browser ??= await launchBrowser();
  const opened = await browser.newPage();
  cleanups.push(() => opened.page.close());
  return opened;
}

const statusIs = (page: Page, state: string) =>
  page.waitForFunction((wanted) => document.getElementById("status")?.dataset.state === wanted, state, { timeout: 60_000 });

/** Pixels of the chart's canvas within a small distance of a colour: has that series been drawn? */
const pixelsOf = (page: Page, chart: string, rgb: readonly [number, number, number]) =>
  page.evaluate(
    ({ chart, rgb }) => {
      const { ctx } = window.dashboard.plots[chart]!;
      const { data } = ctx.getImageData(0, 0, ctx.canvas.width, ctx.canvas.height);
      let count = 0;
      for (let index = 0; index < data.length; index += 4) {
        if (Math.abs(data[index]! - rgb[0]) + Math.abs(data[index + 1]! - rgb[1]) + Math.abs(data[index + 2]! - rgb[2]) < 30) count++;
      }
      return count;
    },
    { chart, rgb },
  );

const BLUE = [0x1f, 0x77, 0xb4] as const;
const MUTED_BLUE = [0xa6, 0xbd, 0xdb] as const;
const GREEN = [0x2c, 0xa0, 0x2c] as const;

describe("the live dashboard, in Chromium", () => {
  it("loads without console errors, draws its charts, adds points as events arrive, and gets the history back after a dropped stream", async () => {
    const dashboard: Dashboard = await startDashboard({ port: 0, title: "thundering-herd", source: "fed by a test" });
    cleanups.push(() => dashboard.close());
    const { page, errors } = await browserPage();
    await page.goto(dashboard.url);
    await statusIs(page, "live");
    expect(await page.textContent("#source")).toBe("fed by a test");

    const points = (run: number) => page.evaluate((index) => window.dashboard.runs[index]?.server.points ?? 0, run);
    const publishServer = async (run: number, atS: number, concurrency: number) => {
      dashboard.publish({ kind: "server", run, atS, concurrency, delayS: 0.1 * 1.05 ** Math.max(0, (concurrency - 30) / 15) });
      await page.waitForFunction(([index, at]) => window.dashboard.runs[index]?.server.points === at, [run, atS] as const);
    };

    dashboard.publish({ kind: "run", run: 0, strategy: "fixed", limit: 30 });
    dashboard.publish({ kind: "phase", run: 0, phase: "steady", atS: 0 });
    for (let second = 1; second <= 5; second++) await publishServer(0, second, 8 + second);
    dashboard.publish({ kind: "phase", run: 0, phase: "outage", atS: 5.5 });
    dashboard.publish({ kind: "phase", run: 0, phase: "observe", atS: 8.5 });
    for (let second = 6; second <= 12; second++) await publishServer(0, second, 3_000 + 100 * second);
    for (const atS of [5, 10]) {
      dashboard.publish({
        kind: "client",
        run: 0,
        atS,
        okPerSec: 95,
        errorsPerSec: 0,
        timedoutPerSec: atS * 20,
        attemptsPerSec: 100 + atS * 20,
      });
    }
    await page.waitForFunction(() => window.dashboard.runs[0]?.client.t.length === 2);
    // A client that reports throttled retries gets that series too.
    const clientSeries = () => page.evaluate(() => window.dashboard.plots.client!.series.map((series) => series.label));
    await page.waitForFunction(() => window.dashboard.plots.client?.data[0]?.includes(10));
    expect(await clientSeries()).toEqual(["t (s)", "OK", "errors", "timedout", "attempts"]);
    dashboard.publish({
      kind: "client",
      run: 0,
      atS: 12,
      okPerSec: 90,
      errorsPerSec: 0,
      timedoutPerSec: 5,
      attemptsPerSec: 95,
      throttledPerSec: 4,
    });
    await page.waitForFunction(() => window.dashboard.plots.client?.series.some((series) => series.label === "throttled"));
    expect(await clientSeries()).toEqual(["t (s)", "OK", "errors", "timedout", "throttled", "attempts"]);
    // A window in which the client fell behind is said loudly, with its figure.
    expect(await page.isHidden("#behind")).toBe(true);
    dashboard.publish({
      kind: "client",
      run: 0,
      atS: 13,
      okPerSec: 0,
      errorsPerSec: 0,
      timedoutPerSec: 400,
      attemptsPerSec: 400,
      behind: "attempts sent late: lateness p99 1900 ms (max 7300 ms) above 200 ms",
    });
    await page.waitForSelector("#behind", { state: "visible" });
    expect(await page.textContent("#behind")).toBe(
      "The client fell behind in 1 window(s), last at 13 s: attempts sent late: lateness p99 1900 ms (max 7300 ms) above 200 ms. " +
        "Those windows measure the client, not the server.",
    );
    // 12 reports drawn (the chart also holds the outage's break and the axis' start at 0).
    await page.waitForFunction(
      () => window.dashboard.plots.concurrency?.data[1]?.filter((value) => value !== null && value !== undefined).length === 12,
    );
    expect(await page.textContent("#strategy")).toBe("fixed");
    expect(await page.textContent("#phase")).toBe("observe");
    expect(await page.textContent("#concurrency")).toBe("4,200");
    expect(await pixelsOf(page, "concurrency", BLUE)).toBeGreaterThan(100);
    expect(await pixelsOf(page, "client", GREEN)).toBeGreaterThan(50);
    expect(
      await page.evaluate(() => window.dashboard.plots.delay?.data[1]?.filter((value) => value !== null && value !== undefined).at(-1)),
    ).toBeCloseTo(Math.log10(0.1 * 1.05 ** ((4_200 - 30) / 15)), 9); // drawn as its logarithm

    // The next strategy is drawn over the earlier one, which turns muted.
    dashboard.publish({ kind: "verdict", run: 0, verdict: "collapsed", why: "Because." });
    dashboard.publish({ kind: "run", run: 1, strategy: "exponential-backoff", limit: 30 });
    for (let second = 1; second <= 3; second++) await publishServer(1, second, 10);
    await page.waitForFunction(() => window.dashboard.plots.concurrency?.series.length === 3);
    expect(await page.evaluate(() => window.dashboard.plots.concurrency!.series.map((series) => series.label))).toEqual([
      "t (s)",
      "fixed (earlier)",
      "exponential-backoff",
    ]);
    expect(await page.textContent("#verdicts")).toBe("fixed: collapsed. Because.");
    expect(await pixelsOf(page, "concurrency", MUTED_BLUE)).toBeGreaterThan(50);

    expect(errors).toEqual([]);

    // The stream drops; meanwhile a report is published. The page reconnects by itself and
    // has every point once: the history is replayed and nothing is counted twice.
    dashboard.dropStreams();
    dashboard.publish({ kind: "server", run: 1, atS: 4, concurrency: 11, delayS: 0.1 });
    await page.waitForFunction(() => window.dashboard.runs[1]?.server.points === 4);
    await statusIs(page, "live");
    expect(await points(0)).toBe(12);
    expect(await page.textContent("#concurrency")).toBe("11");

    dashboard.publish({ kind: "end", note: "the test is over" });
    await statusIs(page, "finished");
    // Chromium reports the stream cut off by dropStreams as a failed resource, and nothing else.
    expect(errors).toEqual(["console: Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING"]);
  });

  it("marks each fault by kind with a labelled band, says which are on, and shows the queue model's queue and threads", async () => {
    const dashboard: Dashboard = await startDashboard({ port: 0, title: "thundering-herd", source: "fed by a test" });
    cleanups.push(() => dashboard.close());
    const { page, errors } = await browserPage();
    await page.goto(dashboard.url);
    await statusIs(page, "live");
    dashboard.publish({ kind: "run", run: 0, strategy: "fixed", limit: 30 });
    dashboard.publish({ kind: "phase", run: 0, phase: "steady", atS: 0 });
    for (let second = 1; second <= 4; second++) {
      dashboard.publish({
        kind: "server",
        run: 0,
        atS: second,
        concurrency: 8 + 10 * second,
        delayS: 0.02,
        queueLength: 10 * second,
        threadsBusy: 8,
        threads: 8,
      });
    }
    await page.waitForFunction(() => window.dashboard.plots.concurrency?.data[0]?.includes(4));
    // The capacity band's orange over the steady phase's tint, on the canvas' transparent ground (its pixels are read unblended).
    const capacityBand = [206, 125, 51] as const;
    expect(await pixelsOf(page, "concurrency", capacityBand)).toBeLessThan(20);
    expect(await page.textContent("#faults")).toBe("–");
    // As the runners send them: the kind's colour and label from its definition.
    dashboard.publish(faultEvent(0, { kind: "capacity", atMs: 2000, durationMs: 4000, factor: 0.5 }));
    dashboard.publish(faultEvent(0, { kind: "slow", atMs: 3000, durationMs: 4000, factor: 3 }));
    dashboard.publish({ kind: "server", run: 0, atS: 5, concurrency: 58, delayS: 0.06, queueLength: 50, threadsBusy: 4, threads: 4 });
    await page.waitForFunction(() => window.dashboard.runs[0]?.server.points === 5);
    // The figures are written at the next animation frame after the data arrive: wait for that drawing.
    await page.waitForFunction(() => document.getElementById("faults")?.textContent !== "–");
    expect(await page.textContent("#faults")).toBe("capacity ×0.5, slow ×3");
    expect(await page.isVisible("#queue-figures")).toBe(true);
    expect(await page.textContent("#queue")).toBe("50");
    expect(await page.textContent("#threads")).toBe("4/4");
    expect(await page.evaluate(() => window.dashboard.plots.concurrency!.series.map((series) => series.label))).toEqual([
      "t (s)",
      "fixed",
      "queue",
    ]);
    expect(await pixelsOf(page, "concurrency", capacityBand)).toBeGreaterThan(200);

    // A spike's extra users (their own client): dashed beside the herd's series, not added into them.
    dashboard.publish({ kind: "client", run: 0, atS: 5, okPerSec: 90, errorsPerSec: 0, timedoutPerSec: 1, attemptsPerSec: 95 });
    dashboard.publish({ kind: "spike-client", run: 0, atS: 5, okPerSec: 40, attemptsPerSec: 70 });
    await page.waitForFunction(() => window.dashboard.plots.client?.series.length === 7);
    expect(await page.evaluate(() => window.dashboard.plots.client!.series.map((series) => series.label))).toEqual([
      "t (s)",
      "OK",
      "errors",
      "timedout",
      "attempts",
      "spike's users: OK",
      "spike's users: attempts",
    ]);
    expect(await page.evaluate(() => window.dashboard.runs[0]!.client.ok)).toEqual([90]);
    expect(await page.evaluate(() => window.dashboard.plots.client!.data[6]!.filter((value) => typeof value === "number"))).toEqual([70]);
    expect(errors).toEqual([]);
  });

  it("plays a simulated run back with ./sim -dashboard -speed 40x, every report of every strategy", async () => {
    const sim = spawnCli("sim", [
      ...["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"],
      ...["-outage-at", "5s", "-outage", "6s", "-duration", "30s", "-strategies", "fixed,exponential-backoff"],
      ...["-json", "-dashboard", "-speed", "40x"],
    ]);
    const url = (await sim.waitForLine(/^sim: dashboard on http:\/\/127\.0\.0\.1:\d+\/$/, { stream: "stderr" })).replace(
      "sim: dashboard on ",
      "",
    );
    await sim.waitForLine(/the playback starts when the page is opened/, { stream: "stderr" });
    const { page, errors } = await browserPage();
    await page.goto(url);
    await statusIs(page, "finished");
    expect(await sim.exited).toBe(0);

    // The simulator printed each run's reports, then its summary.
    const printed = sim.stdoutLines.map((line) => JSON.parse(line) as { source: string; strategy?: string; metrics?: { verdict: string } });
    const summaries = printed.flatMap((object, index) => (object.source === "summary" ? [index] : []));
    const perRun = [printed.slice(0, summaries[0]), printed.slice(summaries[0]! + 1, summaries[1])];
    const runs = await page.evaluate(() => window.dashboard.runs);
    expect(runs.map((run) => run.strategy)).toEqual(["fixed", "exponential-backoff"]);
    for (const [index, run] of runs.entries()) {
      expect(run.server.points).toBe(perRun[index]!.filter((object) => object.source === "server").length);
      expect(run.client.t.length).toBe(perRun[index]!.filter((object) => object.source === "client").length);
      expect(run.phases.map((phase) => `${phase.phase}@${phase.atS}`)).toEqual(["steady@0", "outage@5", "observe@11"]);
      expect(run.verdict?.verdict).toBe(printed[summaries[index]!]!.metrics!.verdict);
    }
    expect(await page.textContent("#verdicts")).toMatch(
      /^fixed: collapsed\. Server still above its limit of 30 .*exponential-backoff: recovered\. Server back under its limit of 30 /,
    );
    expect(errors).toEqual([]);
  });

  it("shows npm run demo -- -dashboard live: its phases, every server report, its verdict", { timeout: 120_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), "thundering-herd-dashboard-"));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const demo = spawnCli(
      "demo",
      [
        ...["--import", "./src/register-tsx.mjs", "src/bin/demo.ts", "-strategies", "fixed", "-out", out, "-dashboard"],
        // Any verdict will do here (the demo's own test judges them): the shortest phases that each hold a few reports.
        ...["-steady", "2s", "-outage", "1s", "-observe", "2s", "-client-args", "-clients 50 -lambda 0.5 -timeout 300ms -interval 500ms"],
      ],
      { command: process.execPath },
    );
    const url = (
      await demo.waitForLine(/^demo: dashboard on http:\/\/127\.0\.0\.1:\d+\/$/, { stream: "stderr", timeoutMs: 30_000 })
    ).replace("demo: dashboard on ", "");
    const { page, errors } = await browserPage();
    await page.goto(url);
    await page.waitForFunction(() => window.dashboard.runs[0]?.phases.some((phase) => phase.phase === "outage"), null, {
      timeout: 60_000,
    });
    await statusIs(page, "finished");
    expect(await demo.exited).toBe(0);

    const [run] = await page.evaluate(() => window.dashboard.runs);
    const [dir] = readdirSync(out);
    const serverLines = readFileSync(join(out, dir!, "fixed.server.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(run!.server.points).toBe(serverLines.length);
    expect(run!.phases.map((phase) => phase.phase)).toEqual(["steady", "outage", "observe"]);
    // The phases the metrics and the report use, to the millisecond.
    const summary = JSON.parse(readFileSync(join(out, dir!, "summary.json"), "utf8")) as {
      results: { phases: { stopAtMs: number; resumeAtMs: number } }[];
    };
    // (The page has seconds, the milliseconds divided by 1000: multiplied back, 8.06 s is 8060.000000000001 ms.)
    const [, outage, observe] = run!.phases.map((phase) => phase.atS * 1000);
    expect(outage).toBeCloseTo(summary.results[0]!.phases.stopAtMs, 6);
    expect(observe).toBeCloseTo(summary.results[0]!.phases.resumeAtMs, 6);
    expect(VERDICTS).toContain(run!.verdict?.verdict);
    expect(await page.textContent("#status")).toMatch(/^finished: the report is .*report\.html$/);
    expect(errors).toEqual([]);
  });
});

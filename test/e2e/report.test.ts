import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { computeMetrics } from "../../src/model/scenario-metrics.ts";
import { renderReport, type StrategyResult } from "../../src/report/report.ts";
import { readClientWindows } from "../../src/contracts/client-line.ts";
import { readServerSamples } from "../../src/contracts/server-line.ts";
import { launchBrowser } from "../../harness/browser.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";

/** What the report's script exposes for tests (window.reportCharts), and the bits of the DOM the checks read. */
interface Plot {
  series: { label: string }[];
  scales: { x: { min: number; max: number } };
  bbox: { left: number; top: number; width: number; height: number };
}
declare const window: { reportCharts: Record<"concurrency" | "delay" | "goodput", Plot> };

const STRATEGIES = ["fixed", "exponential-backoff", "exponential"];
const LIMIT = 30;

/** The scaled-down experiment of the demo test, simulated: each strategy's reports, as the demo would record them. */
async function simulatedResults(): Promise<StrategyResult[]> {
  const sim = spawnCli("sim", [
    ...["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s", "-outage-at", "5s", "-outage", "6s"],
    ...["-duration", "36s", "-strategies", STRATEGIES.join(","), "-json"],
  ]);
  expect(await sim.exited).toBe(0);
  const phases = { stopAtMs: 5_000, resumeAtMs: 11_000, endMs: 36_000 };
  const results: StrategyResult[] = [];
  let lines: string[] = [];
  for (const line of sim.stdoutLines.filter((text) => text.startsWith("{"))) {
    const { source, strategy } = JSON.parse(line) as { source: string; strategy?: string };
    if (source !== "summary") {
      lines.push(line);
      continue;
    }
    const server = readServerSamples(
      lines.filter((text) => text.includes('"source":"server"')),
      0,
      "the simulator's server lines",
    );
    const client = readClientWindows(
      lines.filter((text) => text.includes('"source":"client"')),
      0,
      "the simulator's client lines",
    );
    results.push({
      strategy: strategy!,
      phases,
      server,
      client,
      metrics: computeMetrics(server, client, phases, LIMIT),
      concurrencyLimit: LIMIT,
    });
    lines = [];
  }
  return results;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the report, in Chromium", () => {
  it("opens offline with its table, settings, reasons, overlaid charts with zoom and hover values, and a print fallback", async () => {
    const results = await simulatedResults();
    expect(results.map((result) => result.strategy)).toEqual(STRATEGIES);
    const dir = mkdtempSync(join(tmpdir(), "thundering-herd-report-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { html } = await renderReport("thundering-herd: the crash experiment", results, [
      { name: "outage (SIGSTOP)", value: "6s" },
      { name: "client flags", value: "-clients 200 -lambda 2" },
    ]);
    const file = join(dir, "report.html");
    writeFileSync(file, html);

    const browser = await launchBrowser();
    cleanups.push(() => browser.close());
    const { page, errors } = await browser.newPage();
    const requests: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith("file:")) requests.push(request.url());
    });
    await page.setViewportSize({ width: 1000, height: 900 });
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => window.reportCharts?.goodput !== undefined);

    // A real table, every column visible without scrolling sideways.
    const rows = page.locator("table.comparison tbody tr");
    expect(await rows.count()).toBe(3);
    expect(await page.locator("table.comparison thead th").allTextContents()).toEqual([
      "strategy",
      "verdict",
      "baseline OK/s",
      "outage load",
      "peak concurrency",
      "peak delay",
      "server back",
      "clients back",
      "wasted work",
    ]);
    expect(await rows.locator("th").allTextContents()).toEqual(STRATEGIES);
    expect(await rows.locator("td:nth-child(2)").allTextContents()).toEqual(results.map((result) => result.metrics.verdict));
    expect(await page.locator(".table-wrap").evaluate((wrap) => wrap.scrollWidth <= wrap.clientWidth)).toBe(true);
    // The settings as a table, and why each verdict.
    expect(await page.locator("table.settings tr").allInnerTexts()).toEqual([
      "outage (SIGSTOP)\t6s",
      "client flags\t-clients 200 -lambda 2",
    ]);
    expect(await page.getByText(/^fixed: collapsed\.$/).count()).toBe(1);
    expect(await page.locator("h2:text('Why') + p").innerText()).toMatch(
      /^fixed: collapsed\. Server still above its limit of 30 at its last report.*During the outage the clients sent \d+\.\d\dx the normal load/,
    );

    // Three interactive charts, each with every strategy.
    for (const name of ["concurrency", "delay", "goodput"] as const) {
      expect(await page.evaluate((chart) => window.reportCharts[chart].series.map((series) => series.label), name)).toEqual([
        "t (s)",
        ...results.map((result) => `${result.strategy} (${result.metrics.verdict})`),
      ]);
    }
    expect(await page.locator(".live-charts canvas").count()).toBe(3);
    expect(await page.locator(".static-charts").isVisible()).toBe(false);

    // Hovering one chart shows the values at that time under all three.
    const over = page.locator("#overlay-concurrency .u-over");
    await over.scrollIntoViewIfNeeded();
    const box = await over.boundingBox();
    await page.mouse.move(box!.x + box!.width * 0.5, box!.y + box!.height * 0.5);
    const legendValues = (chart: string) => page.locator(`#overlay-${chart} .u-legend .u-series .u-value`).allTextContents();
    await page.waitForFunction(
      () => document.querySelector("#overlay-goodput .u-legend .u-series:nth-child(2) .u-value")?.textContent !== "--",
    );
    for (const chart of ["concurrency", "goodput"]) {
      const values = await legendValues(chart);
      expect(values[0], `${chart}: time under the cursor`).toMatch(/^\d/);
      expect(
        values.slice(1).some((value) => /^\d/.test(value)),
        `${chart}: ${values.join(", ")}`,
      ).toBe(true);
    }

    // Dragging across the middle zooms in.
    await page.mouse.move(box!.x + box!.width * 0.3, box!.y + box!.height * 0.5);
    await page.mouse.down();
    await page.mouse.move(box!.x + box!.width * 0.6, box!.y + box!.height * 0.5, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => window.reportCharts.concurrency.scales.x.min > 1);
    const zoomed = await page.evaluate(() => window.reportCharts.concurrency.scales.x);
    expect(zoomed.max).toBeLessThan(36);
    expect(zoomed.max - zoomed.min).toBeLessThan(18);

    // Printed: the static SVG charts instead of the canvases.
    await page.emulateMedia({ media: "print" });
    expect(await page.locator(".static-charts svg").isVisible()).toBe(true);
    expect(await page.locator(".live-charts").isVisible()).toBe(false);
    expect(await page.locator("section.strategy svg").count()).toBe(3);

    expect(requests, "the report fetches nothing").toEqual([]);
    expect(errors).toEqual([]);
  });
});

declare const document: { querySelector(selector: string): { textContent: string | null } | null };

import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { DashboardEvent } from "../../../src/dashboard/events.ts";
import { type Dashboard, startDashboard } from "../../../src/dashboard/server.ts";
import { chartScriptFile, uPlotFile } from "../../../src/report/chart-files.ts";

const started: Dashboard[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((dashboard) => dashboard.close()));
});

async function start() {
  const dashboard = await startDashboard({ port: 0, title: "test", source: "a test" });
  started.push(dashboard);
  return dashboard;
}

/** Opens GET /events and collects the events it receives. */
async function subscribe(url: string) {
  const controller = new AbortController();
  const response = await fetch(new URL("events", url), { signal: controller.signal });
  const events: DashboardEvent[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const waiters: (() => void)[] = [];
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split("\n").find((line) => line.startsWith("data: "));
          if (data !== undefined) events.push(JSON.parse(data.slice(6)) as DashboardEvent);
          for (const wake of waiters.splice(0)) wake();
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    response,
    events,
    async until(count: number) {
      while (events.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () => controller.abort(),
  };
}

describe("dashboard server", () => {
  it("serves the page, its script and uPlot from the package, on 127.0.0.1", async () => {
    const dashboard = await start();
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(dashboard.url);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain('<script src="uPlot.iife.min.js"></script>');
    expect(html).not.toMatch(/src="https?:/);
    const uPlot = await fetch(new URL("uPlot.iife.min.js", dashboard.url));
    expect(await uPlot.text()).toBe(readFileSync(uPlotFile("uPlot.iife.min.js"), "utf8"));
    expect((await fetch(new URL("dashboard.js", dashboard.url))).status).toBe(200);
    expect(html).toContain('<script src="charts.js"></script>');
    expect(await (await fetch(new URL("charts.js", dashboard.url))).text()).toBe(readFileSync(chartScriptFile("charts.js"), "utf8"));
    expect((await fetch(new URL("nothing-here", dashboard.url))).status).toBe(404);
    expect((await fetch(dashboard.url, { method: "POST" })).status).toBe(405);
  });

  it("streams events, and replays the history to every new connection after a hello", async () => {
    const dashboard = await start();
    dashboard.publish({ kind: "run", run: 0, strategy: "fixed", limit: 30 });
    const first = await subscribe(dashboard.url);
    expect(first.response.headers.get("content-type")).toBe("text/event-stream");
    await first.until(2);
    expect(first.events.map((event) => event.kind)).toEqual(["hello", "run"]);
    await dashboard.firstViewer();

    dashboard.publish({ kind: "server", run: 0, atS: 1, concurrency: 7, delayS: 0.1 });
    await first.until(3);
    expect(first.events[2]).toEqual({ kind: "server", run: 0, atS: 1, concurrency: 7, delayS: 0.1 });

    // A page that reconnects gets everything so far, once, starting with hello.
    dashboard.dropStreams();
    const second = await subscribe(dashboard.url);
    await second.until(3);
    expect(second.events).toEqual(first.events);
    first.close();
    second.close();
  });
});

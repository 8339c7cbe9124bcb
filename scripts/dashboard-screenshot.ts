// Makes docs/dashboard.png: the full-size scenario simulated (1000 clients, 15 s steady,
// 20 s outage), played back on the dashboard at 10x, exponential backoff first, then fixed
// retry; the picture is taken in fixed retry's storm, 20 s after the resume.
// Run: npx tsx scripts/dashboard-screenshot.ts
import { resolve } from "node:path";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { launchBrowser } from "../harness/browser.ts";

/** What the page's script exposes (window.dashboard); this runs in the page. */
declare const window: { dashboard: { runs: { server: { t: number[] } }[] } };

const root = resolve(import.meta.dirname, "..");
const sim = new ChildProgram("sim", resolve(root, "sim"), [
  "-strategies",
  "exponential-backoff,fixed",
  "-quiet",
  "-dashboard",
  "-speed",
  "10x",
]);
const browser = await launchBrowser();
try {
  const line = await sim.waitForLine(/dashboard on (http\S+)/, { stream: "stderr", timeoutMs: 60_000 });
  const { page, errors } = await browser.newPage();
  await page.setViewportSize({ width: 1100, height: 1000 });
  await page.goto(/dashboard on (http\S+)/.exec(line)![1]!);
  await page.waitForFunction(() => (window.dashboard.runs[1]?.server.t.at(-1) ?? 0) >= 55, null, { timeout: 120_000 });
  const file = resolve(root, "docs/dashboard.png");
  await page.screenshot({ path: file, fullPage: true });
  if (errors.length > 0) throw new Error(`the page reported errors: ${errors.join("; ")}`);
  process.stdout.write(`wrote ${file}\n`);
} finally {
  await browser.close();
  sim.kill();
  await sim.exited;
}

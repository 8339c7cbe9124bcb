/**
 * Records the real programs' run of examples/01 that docs/validation.md cites (key
 * timeout400msRealtimePriority of docs/example-01-real.json; the file's other keys are kept):
 * the example scaled as test/validate/examples-catalog.ts's realRows runs it (a 10 s stop, 200
 * users thinking 2 s, a 400 ms timeout), both strategies, at real-time priority (`chrt -r 10`)
 * where this machine allows it, so that the real client keeps up on a shared machine and its
 * verdict is judged. Fixed retry's storm makes an ordinary-priority client fall behind here.
 *
 *   node --import ./src/register-tsx.mjs scripts/example-01-real.ts [-out docs/example-01-real.json]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseSummary } from "../src/report/summary-file.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { REALTIME_PREFIX } from "../harness/realtime.ts";

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const out = resolve(ROOT, option("-out") ?? "docs/example-01-real.json");
const say = (text: string) => process.stderr.write(`example-01-real: ${text}\n`);

const SEED = 1;
const CLIENT_ARGS = `-clients 200 -lambda 2 -timeout 400ms -seed ${SEED} -interval 1s`;
const DEMO_ARGS = ["examples/01-article-fixed-vs-backoff.yaml", "-faults", "stop@10s+10s", "-observe", "25s"];
const demoArgs = (outDir: string) => [...DEMO_ARGS, "-server-args", `-seed ${SEED}`, "-client-args", CLIENT_ARGS, "-out", outDir];

/** Runs the demo in its own process group, stopped by that group if this script is interrupted. */
async function runDemo(outDir: string): Promise<void> {
  const command = [...REALTIME_PREFIX, process.execPath, "--import", "./src/register-tsx.mjs", "src/bin/demo.ts", ...demoArgs(outDir)];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, detached: true, stdio: ["ignore", "inherit", "inherit"] });
  // Interrupted or terminated, the demo's whole group goes too: it may hold real-time priority.
  const stop = () => process.kill(-child.pid!, "SIGTERM");
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) process.once(signal, stop);
  const code = await new Promise<number | null>((done) => child.on("exit", done));
  for (const signal of signals) process.off(signal, stop);
  if (code !== 0) throw new Error(`the demo exited ${code}`);
}

/** How many of a strategy's client windows the client marked behind (src/model/client-behind.ts). */
function windowsBehind(dir: string, strategy: string): { windows: number; behind: number } {
  const lines = readFileSync(join(dir, `${strategy}.client.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { summary?: boolean; behind?: boolean })
    .filter((line) => line.summary !== true);
  return { windows: lines.length, behind: lines.filter((line) => line.behind === true).length };
}

// The code that runs: taken before the run, so that edits made meanwhile do not mark it.
const recordedBy = provenance();
const outDir = mkdtempSync(join(tmpdir(), "thundering-herd-example-01-real-"));
try {
  const before = loadavg()[0]!;
  say(`running: ${[...REALTIME_PREFIX, "npm run demo --", ...DEMO_ARGS].join(" ")} (about 2 minutes)`);
  await runDemo(outDir);
  const after = loadavg()[0]!;
  // The demo writes its results into a folder named by the time, under -out.
  const reportDir = join(outDir, readdirSync(outDir)[0]!);
  const report = readFileSync(join(reportDir, "summary.json"), "utf8");
  const results = parseSummary(report).results.map(({ strategy, metrics }) => ({
    strategy,
    verdict: metrics.verdict,
    why: metrics.why,
    clientWindows: windowsBehind(reportDir, strategy).windows,
    clientWindowsBehind: windowsBehind(reportDir, strategy).behind,
  }));
  const quoted = (arg: string) => (/\s/.test(arg) ? `"${arg}"` : arg);
  const record = {
    command: [
      ...REALTIME_PREFIX,
      "npm run demo --",
      ...[...DEMO_ARGS, "-server-args", `-seed ${SEED}`, "-client-args", CLIENT_ARGS].map(quoted),
    ].join(" "),
    recordedBy: "node --import ./src/register-tsx.mjs scripts/example-01-real.ts",
    why: "the validation page's scaling on the real programs, at real-time priority where allowed, so that the client keeps up on a shared machine",
    realtimePriority: REALTIME_PREFIX.length > 0,
    provenance: { ...recordedBy, seeds: { server: SEED, client: SEED }, loadAverage1m: { before, after } },
    results,
  };
  const previous = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>) : {};
  writeFileSync(out, `${JSON.stringify({ ...previous, timeout400msRealtimePriority: record }, null, 1)}\n`);
  say(`wrote ${out}: ${JSON.stringify(results)}`);
} finally {
  rmSync(outDir, { recursive: true, force: true });
}

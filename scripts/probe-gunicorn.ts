/**
 * Records `thundering-herd probe` against a real third-party server for the README: Debian's
 * gunicorn (/usr/bin/python3 -m gunicorn) with 4 sync workers serving a WSGI app that sleeps
 * 50 ms, on a free loopback port. Runs the probe in this process with -out and -validate,
 * stops gunicorn by its process group, and writes what the probe printed, the scenario it
 * wrote and how it was recorded (commit, machine) to docs/probe-gunicorn-summary.json.
 *
 *   node --import ./src/register-tsx.mjs scripts/probe-gunicorn.ts [probe flags]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { probeLines, writeResultsFile } from "./probe-for-results.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { provenance } from "../src/runtime/provenance.ts";

const WORKERS = 4;
const SLEEP_MS = 50;
const FILE = "docs/probe-gunicorn-summary.json";

const dir = mkdtempSync(join(tmpdir(), "probe-gunicorn-"));
writeFileSync(
  join(dir, "app.py"),
  `import time\n\ndef application(environ, start_response):\n    time.sleep(${SLEEP_MS / 1000})\n` +
    `    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])\n    return [b"OK"]\n`,
);
const gunicornArgs = ["-m", "gunicorn", "-w", String(WORKERS), "-k", "sync", "-b", "127.0.0.1:0", "--chdir", dir, "app:application"];
const gunicorn = new ChildProgram("gunicorn", "/usr/bin/python3", gunicornArgs);
const recordedAt = provenance();
try {
  const listening = await gunicorn.waitForLine(/Listening at: http:\/\/127\.0\.0\.1:\d+/, { stream: "stderr", timeoutMs: 30_000 });
  const version = /gunicorn (\S+)/.exec(gunicorn.stderr.map((line) => line.text).join("\n"))?.[1] ?? "unknown";
  const url = `http://127.0.0.1:${/:(\d+) \(/.exec(listening)![1]}/`;
  const scenarioFile = join(dir, "service.yaml");
  const probeArgs = [...process.argv.slice(2), "-out", scenarioFile, "-validate", url];
  const { code, lines } = await probeLines(probeArgs);
  if (code !== 0) process.exit(code);
  const picked = lines.find((line) => line.startsWith("picked "))!;
  const saturation = /^measured saturation: ([\d.]+) req\/s .*model capacity ([\d.]+) req\/s/.exec(
    lines.find((line) => line.startsWith("measured saturation")) ?? "",
  );
  const scenario = readFileSync(scenarioFile, "utf8");
  const summary = {
    provenance: recordedAt,
    service: { server: `gunicorn ${version} (Debian), ${WORKERS} sync workers`, app: `WSGI app that sleeps ${SLEEP_MS} ms per request` },
    command: `npm run probe -- ${probeArgs.map((arg) => (arg === scenarioFile ? "service.yaml" : arg)).join(" ")}`,
    picked,
    measuredSaturationPerSec: Number(saturation?.[1]),
    modelCapacityPerSec: Number(saturation?.[2]),
    system: (parse(scenario) as { system: unknown }).system,
    output: lines,
    scenario,
  };
  writeResultsFile(FILE, summary);
} finally {
  await gunicorn.stop();
  rmSync(dir, { recursive: true, force: true });
}

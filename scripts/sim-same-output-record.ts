/**
 * Records scripts/sim-same-output.sh's seeded runs, made by this checkout's simulator from source,
 * in one results file (docs/sim-same-output.json) with the commit and machine, so that "the
 * simulator's output is unchanged" is a check: `npm run validate -- sim-same-output` runs this
 * again and names each figure that changed (harness/results-files.ts).
 *
 *   node --import ./src/register-tsx.mjs scripts/sim-same-output-record.ts docs/sim-same-output.json
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { provenance } from "../src/runtime/provenance.ts";

const file = process.argv[2];
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/sim-same-output-record.ts docs/<name>.json\n");
  process.exit(2);
}
const ROOT = resolve(import.meta.dirname, "..");
const recordedBy = provenance();

/** A run's stdout: its JSON lines, or its text where a line is not JSON (-find-critical-outage). */
function output(text: string): unknown[] {
  const lines = text.trimEnd().split("\n");
  try {
    return lines.map((line) => JSON.parse(line) as unknown);
  } catch {
    return lines;
  }
}

const out = mkdtempSync(join(tmpdir(), "sim-same-output-"));
try {
  execFileSync("bash", [join(ROOT, "scripts/sim-same-output.sh"), out, join(ROOT, "src/bin/sim.ts")], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const names = readdirSync(out)
    .filter((name) => name.endsWith(".json"))
    .map((name) => name.slice(0, -".json".length))
    .sort();
  // Keyed by the run's name, so that a changed figure's path names its run.
  const runs = Object.fromEntries(
    names.map((name) => [
      name,
      {
        events: [...readFileSync(join(out, `${name}.events`), "utf8").matchAll(/(\d+) events/g)].map((match) => Number(match[1])),
        output: output(readFileSync(join(out, `${name}.json`), "utf8")),
      },
    ]),
  );
  const record = { provenance: recordedBy, command: "scripts/sim-same-output.sh OUT_DIR src/bin/sim.ts", runs };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  process.stderr.write(`wrote ${file}: ${names.length} runs\n`);
} finally {
  rmSync(out, { recursive: true, force: true });
}

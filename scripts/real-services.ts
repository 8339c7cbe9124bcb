/**
 * Records what `thundering-herd probe` measures past saturation on a zoo of real services from
 * Debian's packages (test/helpers/zoo-services.ts: gunicorn sync as it comes and with a small
 * backlog, gunicorn gthread, nginx limit_conn, haproxy maxconn with a queue timeout, apache2
 * prefork), one after the other: each started on free loopback ports, probed in this process with
 * -out, stopped by its process groups. Writes each one's overload lines, the model picked, the
 * scenario's system and measured sections, and how it was recorded (commit, machine, load) to
 * docs/real-services.json (docs/real-services.md reads it).
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services.ts [service names]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { main } from "../src/probe/main.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { ZOO, type ZooEntry } from "../test/helpers/zoo-services.ts";

const FILE = "docs/real-services.json";

/** Steps that saturate 4 workers of 50 ms and go past the level to twice it; the phase past saturation as a user gets it. */
export const REAL_SERVICE_PROBE_FLAGS = [
  "-steps",
  "1,2,4,8,16",
  "-step-duration",
  "1s",
  "-step-requests",
  "100",
  "-overload-settle",
  "30s",
];

const names = process.argv.slice(2);
const unknown = names.filter((name) => !ZOO.some((entry) => entry.name === name));
if (unknown.length > 0) {
  process.stderr.write(`real-services: no service ${unknown.join(", ")}; the zoo has ${ZOO.map((entry) => entry.name).join(", ")}\n`);
  process.exit(2);
}
const entries = names.length === 0 ? ZOO : ZOO.filter((entry) => names.includes(entry.name));

const recordedAt = provenance();
const loadBefore = loadavg()[0]!;
const services = [];
for (const entry of entries) services.push(await probed(entry));
writeFileSync(
  FILE,
  `${JSON.stringify(
    {
      provenance: { ...recordedAt, loadAverage: [Number(loadBefore.toFixed(2)), Number(loadavg()[0]!.toFixed(2))] },
      command: `node --import ./src/register-tsx.mjs scripts/real-services.ts${names.length === 0 ? "" : ` ${names.join(" ")}`}`,
      probeFlags: REAL_SERVICE_PROBE_FLAGS,
      services,
    },
    null,
    2,
  )}\n`,
);
process.stderr.write(`wrote ${FILE}\n`);

async function probed(entry: ZooEntry) {
  process.stderr.write(`real-services: ${entry.name}: ${entry.setup}\n`);
  const service = await entry.start();
  const dir = mkdtempSync(join(tmpdir(), "real-services-"));
  let stdout = "";
  try {
    const scenarioFile = join(dir, "service.yaml");
    const args = [...REAL_SERVICE_PROBE_FLAGS, "-out", scenarioFile, service.url];
    const code = await main(args, { stdout: { write: (text: string) => (stdout += text) }, stderr: process.stderr, env: process.env });
    process.stdout.write(stdout);
    if (code !== 0) throw new Error(`the probe of ${entry.name} ended with ${code}`);
    const lines = stdout.trimEnd().split("\n");
    const scenario = parse(readFileSync(scenarioFile, "utf8")) as { system: Record<string, unknown>; measured: Record<string, unknown> };
    const pastSaturation = (line: string) => /^(overload|recovery|work for nobody|past saturation)/.test(line);
    return {
      name: entry.name,
      setup: entry.setup,
      versions: service.versions,
      picked: lines.find((line) => line.startsWith("picked ")),
      pastSaturation: lines.filter(pastSaturation),
      system: scenario.system,
      measured: scenario.measured,
    };
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

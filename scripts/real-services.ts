/**
 * Records what `thundering-herd probe` measures past saturation on a zoo of real services from
 * Debian's packages (test/helpers/zoo-services.ts: gunicorn sync as it comes and with a small
 * backlog, gunicorn gthread, nginx limit_conn, haproxy maxconn with a queue timeout, apache2
 * prefork), one after the other: each started on free loopback ports, probed in this process with
 * -out, stopped by its process groups. Writes each one's overload lines, the model picked, the
 * scenario's system and measured sections, and how it was recorded (commit, machine, load) to
 * docs/real-services.json (docs/real-services.md reads it); given some services' names, only
 * those, to results/real-services-some.json.
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services.ts [service names]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { probeLines, writeResultsFile } from "./probe-for-results.ts";
import { main as simMain } from "../src/sim/main.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { ZOO, type ZooEntry, type ZooService } from "../test/helpers/zoo-services.ts";

/** The committed file holds the whole zoo; a run of some services only writes beside the other results, git-ignored. */
const WHOLE_ZOO_FILE = "docs/real-services.json";
const SOME_SERVICES_FILE = "results/real-services-some.json";

/**
 * The simulator's experiment on each probed scenario, the issue's: 200 users thinking 5 s with a
 * 1 s timeout, fixed retry and one backoff, after a 20 s stop and after a spike of 3 × the users for 10 s.
 */
const SIM_FLAGS = ["-clients", "200", "-lambda", "5", "-timeout", "1s", "-strategies", "fixed,full-jitter", "-duration", "95s", "-quiet"];
const SIM_FAULTS = ["stop@15s+20s", "spike@15s+10s*3"];

/** Steps that saturate 4 workers of 50 ms and go past the level to twice it; the phase past saturation as a user gets it. */
const REAL_SERVICE_PROBE_FLAGS = ["-steps", "1,2,4,8,16", "-step-duration", "1s", "-step-requests", "100", "-overload-settle", "30s"];

const names = process.argv.slice(2);
const unknown = names.filter((name) => !ZOO.some((entry) => entry.name === name));
if (unknown.length > 0) {
  process.stderr.write(`real-services: no service ${unknown.join(", ")}; the zoo has ${ZOO.map((entry) => entry.name).join(", ")}\n`);
  process.exit(2);
}
const entries = names.length === 0 ? ZOO : ZOO.filter((entry) => names.includes(entry.name));
const FILE = names.length === 0 ? WHOLE_ZOO_FILE : SOME_SERVICES_FILE;

/** The service running now, stopped by its process groups on Ctrl-C too: they are detached, so the terminal's SIGINT misses them. */
let running: ZooService | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    void (running?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

const recordedAt = provenance();
const loadBefore = loadavg()[0]!;
const services = [];
for (const entry of entries) services.push(await probed(entry));
mkdirSync(dirname(FILE), { recursive: true });
writeResultsFile(FILE, {
  provenance: { ...recordedAt, loadAverage: [Number(loadBefore.toFixed(2)), Number(loadavg()[0]!.toFixed(2))] },
  command: `node --import ./src/register-tsx.mjs scripts/real-services.ts${names.length === 0 ? "" : ` ${names.join(" ")}`}`,
  probeFlags: REAL_SERVICE_PROBE_FLAGS,
  simFlags: SIM_FLAGS,
  services,
});

async function probed(entry: ZooEntry) {
  process.stderr.write(`real-services: ${entry.name}: ${entry.setup}\n`);
  const service = await entry.start();
  running = service;
  const dir = mkdtempSync(join(tmpdir(), "real-services-"));
  try {
    const scenarioFile = join(dir, "service.yaml");
    const args = [...REAL_SERVICE_PROBE_FLAGS, "-out", scenarioFile, service.url];
    const { code, lines } = await probeLines(args);
    if (code !== 0) throw new Error(`the probe of ${entry.name} ended with ${code}`);
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
      simulated: await simulated(scenarioFile, dir),
    };
  } finally {
    running = undefined;
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface SimulatedStrategy {
  readonly strategy: string;
  readonly metrics: { verdict: string; serverRecoveryMs: number | null; clientRecoveryMs: number | null; why: string };
}

/** The simulator's verdicts on the probed scenario, per fault and strategy, with the seed it ran (summary.json). */
async function simulated(scenarioFile: string, dir: string) {
  const runs = [];
  for (const fault of SIM_FAULTS) {
    const out = join(dir, `sim-${runs.length}`);
    const args = [scenarioFile, ...SIM_FLAGS, "-faults", fault, "-out", out];
    const code = await simMain(args, { stdout: { write: () => true }, stderr: process.stderr, env: process.env });
    if (code !== 0) throw new Error(`./sim ${args.join(" ")} ended with ${code}`);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as {
      settings: { seed: number };
      results: SimulatedStrategy[];
    };
    runs.push({
      fault,
      seed: summary.settings.seed,
      strategies: summary.results.map(({ strategy, metrics }) => ({
        strategy,
        verdict: metrics.verdict,
        serverBackMs: metrics.serverRecoveryMs,
        clientsBackMs: metrics.clientRecoveryMs,
        why: metrics.why,
      })),
    });
  }
  return runs;
}

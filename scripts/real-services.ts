/**
 * Records what `thundering-herd probe` measures past saturation on a zoo of real services from
 * Debian's packages (test/helpers/zoo-services.ts: gunicorn sync as it comes and with a small
 * backlog, gunicorn gthread, nginx limit_conn, haproxy maxconn with a queue timeout, apache2
 * prefork), one after the other: each started on free loopback ports, probed in this process with
 * -out, stopped by its process groups; then the crash experiment run on it by demo -target (the
 * service started again by its command, in one process group), after a stop and after a spike,
 * with the simulator's prediction on the probed scenario beside it. Writes each one's overload
 * lines, the model picked, the scenario's system and measured sections, each experiment's real and
 * predicted figures, and how it was recorded (commit, machine, load) to docs/real-services.json
 * (docs/real-services.md reads it); given some services' names, only those, to
 * results/real-services-some.json. About 7 minutes a service, 12 where choose runs too.
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services.ts [service names]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { probeLines, writeResultsFile } from "./probe-for-results.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { ZOO, type ZooEntry } from "../test/helpers/zoo-services.ts";
import {
  CHOOSE_ON,
  chooseOnTheRealService,
  DEMO_SEED,
  demoFlags,
  FAULTS,
  interruptible,
  onTheRealService,
  stopOnInterrupt,
} from "./real-service-runs.ts";

/** The committed file holds the whole zoo; a run of some services only writes beside the other results, git-ignored. */
const WHOLE_ZOO_FILE = "docs/real-services.json";
const SOME_SERVICES_FILE = "results/real-services-some.json";

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

stopOnInterrupt();

const recordedAt = provenance();
const loadBefore = loadavg()[0]!;
const services = [];
for (const entry of entries) services.push(await probed(entry));
mkdirSync(dirname(FILE), { recursive: true });
writeResultsFile(FILE, {
  provenance: { ...recordedAt, loadAverage: [Number(loadBefore.toFixed(2)), Number(loadavg()[0]!.toFixed(2))] },
  command: `node --import ./src/register-tsx.mjs scripts/real-services.ts${names.length === 0 ? "" : ` ${names.join(" ")}`}`,
  probeFlags: REAL_SERVICE_PROBE_FLAGS,
  demoFlags: demoFlags(DEMO_SEED),
  faults: FAULTS,
  services,
});

async function probed(entry: ZooEntry) {
  process.stderr.write(`real-services: ${entry.name}: ${entry.setup}\n`);
  const dir = mkdtempSync(join(tmpdir(), "real-services-"));
  try {
    const scenarioFile = join(dir, "service.yaml");
    const service = await entry.start();
    interruptible.running = service;
    const probe = await probeLines([...REAL_SERVICE_PROBE_FLAGS, "-out", scenarioFile, service.url]).finally(() => {
      interruptible.running = undefined;
      return service.stop();
    });
    if (probe.code !== 0) throw new Error(`the probe of ${entry.name} ended with ${probe.code}`);
    const scenario = parse(readFileSync(scenarioFile, "utf8")) as { system: Record<string, unknown>; measured: Record<string, unknown> };
    const pastSaturation = (line: string) => /^(overload|recovery|work for nobody|past saturation)/.test(line);
    const experiments = [];
    for (const fault of FAULTS)
      experiments.push(await onTheRealService(entry, scenarioFile, fault, join(dir, `demo-${experiments.length}`)));
    return {
      name: entry.name,
      setup: entry.setup,
      versions: service.versions,
      picked: probe.lines.find((line) => line.startsWith("picked ")),
      pastSaturation: probe.lines.filter(pastSaturation),
      system: scenario.system,
      measured: scenario.measured,
      experiments,
      ...(CHOOSE_ON.includes(entry.name) ? { choose: await chooseOnTheRealService(entry, scenarioFile, join(dir, "choose")) } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

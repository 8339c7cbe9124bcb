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
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { probeLines, writeResultsFile } from "./probe-for-results.ts";
import { main as chooseMain } from "../src/choose/main.ts";
import { main as demoMain } from "../src/demo/main.ts";
import type { OutputStream, ProgramIo } from "../src/runtime/program-io.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { ZOO, type ZooEntry, type ZooService } from "../test/helpers/zoo-services.ts";

/** The committed file holds the whole zoo; a run of some services only writes beside the other results, git-ignored. */
const WHOLE_ZOO_FILE = "docs/real-services.json";
const SOME_SERVICES_FILE = "results/real-services-some.json";
/** Each run's own results (report, summary, the watcher's and the clients' lines), kept for a disagreement's explanation; git-ignored. */
const RUNS_DIR = "results/real-services";

/**
 * The issue's experiment, run by demo -target on the real service with the simulator's prediction
 * on the probed scenario beside it: 200 users thinking 5 s with a 1 s timeout, fixed retry and one
 * backoff, after a 20 s stop of the service's process group and after a spike of 3 × the users for
 * 10 s; a minute observed after each. One seed for every run: the same users' draws in both clocks.
 */
const DEMO_SEED = 1;
const DEMO_FLAGS = [
  ...["-strategies", "fixed,full-jitter", "-observe", "60s"],
  ...["-client-args", `-clients 200 -lambda 5 -timeout 1s -interval 1s -seed ${DEMO_SEED}`],
];
const FAULTS = ["stop@15s+20s", "spike@15s+10s*3"];

/**
 * Where choose -validate runs its winner and the named loser (fixed retry) on the real service
 * (-target), for the same users: the services whose scenarios differ most past saturation.
 */
const CHOOSE_ON = ["gunicorn-sync", "gunicorn-gthread", "nginx-limit-conn", "haproxy-maxconn-queue"];
const CHOOSE_SYSTEM = ["-clients", "200", "-lambda", "5", "-timeout", "1s"];

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
/** While a demo or choose runs in this process. */
let inProgram = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A program that listens for it (the demo; choose while it validates) stops its own processes and returns 130.
    if (inProgram && process.listenerCount(signal) > 1) return;
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
  demoFlags: DEMO_FLAGS,
  faults: FAULTS,
  services,
});

async function probed(entry: ZooEntry) {
  process.stderr.write(`real-services: ${entry.name}: ${entry.setup}\n`);
  const dir = mkdtempSync(join(tmpdir(), "real-services-"));
  try {
    const scenarioFile = join(dir, "service.yaml");
    const service = await entry.start();
    running = service;
    const probe = await probeLines([...REAL_SERVICE_PROBE_FLAGS, "-out", scenarioFile, service.url]).finally(() => {
      running = undefined;
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

/** A strategy's figures as summary.json has them. */
interface Metrics {
  readonly verdict: string;
  readonly serverRecoveryMs?: number;
  readonly clientRecoveryMs?: number;
  readonly why: string;
}

/**
 * demo -target on the service, started by its command (every program in one process group, which
 * the stop strikes), on the probed scenario: each strategy's real figures and the simulator's beside them.
 */
async function onTheRealService(entry: ZooEntry, scenarioFile: string, fault: string, dir: string) {
  mkdirSync(dir);
  const target = await entry.command(dir);
  const out = join(RUNS_DIR, entry.name, fault);
  const args = [scenarioFile, ...DEMO_FLAGS, "-faults", fault, "-target", target.url, "-target-cmd", target.command, "-out", out];
  process.stderr.write(`real-services: ${entry.name}: demo ${fault}\n`);
  const code = await runProgram(demoMain, args, process.stderr);
  if (code !== 0) throw new Error(`demo ${args.join(" ")} ended with ${code}`);
  const summary = latestSummary(out) as {
    settings: {
      target: { baselineMs: object; atBaselineWithinMs: number };
      predicted: { strategy: string; metrics?: Metrics; why?: string }[];
    };
    results: { strategy: string; metrics: Metrics }[];
  };
  const figures = (metrics: Metrics) => ({
    verdict: metrics.verdict,
    serverBackMs: metrics.serverRecoveryMs ?? null,
    clientsBackMs: metrics.clientRecoveryMs ?? null,
    why: metrics.why,
  });
  return {
    fault,
    seed: DEMO_SEED,
    baselineMs: summary.settings.target.baselineMs,
    atBaselineWithinMs: summary.settings.target.atBaselineWithinMs,
    strategies: summary.results.map(({ strategy, metrics }) => {
      const prediction = summary.settings.predicted.find((predicted) => predicted.strategy === strategy);
      return {
        strategy,
        real: figures(metrics),
        predicted: prediction?.metrics === undefined ? { why: prediction?.why ?? "none" } : figures(prediction.metrics),
      };
    }),
  };
}

/** Runs a program in this process, which then leaves Ctrl-C to it. */
async function runProgram(
  main: (argv: readonly string[], io: ProgramIo) => Promise<number>,
  args: readonly string[],
  stdout: OutputStream,
): Promise<number> {
  inProgram = true;
  try {
    return await main(args, { stdout, stderr: process.stderr, env: process.env });
  } finally {
    inProgram = false;
  }
}

/** choose on the probed scenario, its winner and fixed retry then run on the service by -validate -target: its answer and the check. */
async function chooseOnTheRealService(entry: ZooEntry, scenarioFile: string, dir: string) {
  mkdirSync(dir);
  const target = await entry.command(dir);
  const out = join(RUNS_DIR, entry.name, "choose");
  const args = [scenarioFile, ...CHOOSE_SYSTEM, "-validate", "-target", target.url, "-target-cmd", target.command, "-out", out];
  process.stderr.write(`real-services: ${entry.name}: choose -validate\n`);
  const code = await runProgram(chooseMain, args, { write: () => true });
  if (code !== 0) throw new Error(`choose ${args.join(" ")} ended with ${code}`);
  const summary = latestSummary(out) as {
    recommendation: { id: string };
    validation: object;
  };
  return { args: [...CHOOSE_SYSTEM, "-validate"], winner: summary.recommendation.id, validation: summary.validation };
}

/** The summary.json of a program's latest results folder under `out` (results/<time>/, choose-<time>/). */
function latestSummary(out: string): unknown {
  return JSON.parse(readFileSync(join(out, readdirSync(out).sort().at(-1)!, "summary.json"), "utf8"));
}

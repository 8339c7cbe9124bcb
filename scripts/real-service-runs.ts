/**
 * The runs on the zoo's real services that scripts/real-services.ts and
 * scripts/real-services-repeat.ts make, in this process: the crash experiment by demo -target
 * (the simulator's prediction beside it), choose -validate -target, and the interrupt handling
 * that stops what they started. Each run's own results stay under results/real-services/.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { main as chooseMain } from "../src/choose/main.ts";
import { parseClientLine } from "../src/contracts/client-line.ts";
import { jsonLines } from "../src/contracts/json-line.ts";
import { main as demoMain } from "../src/demo/main.ts";
import { percentile } from "../src/model/percentile.ts";
import type { OutputStream, ProgramIo } from "../src/runtime/program-io.ts";
import type { ZooEntry, ZooService } from "../test/helpers/zoo-services.ts";

/** Each run's own results (report, summary, the watcher's and the clients' lines), kept for a disagreement's explanation; git-ignored. */
const RUNS_DIR = "results/real-services";

/**
 * The issue's experiment, run by demo -target on the real service with the simulator's prediction
 * on the probed scenario beside it: 200 users thinking 5 s with a 1 s timeout, fixed retry and one
 * backoff, after a 20 s stop of the service's process group and after a spike of 3 × the users for
 * 10 s; 90 s observed after each (under full jitter gunicorn's clients come back near the
 * minute, on both sides). One seed for every run: the same users' draws in both clocks.
 */
export const DEMO_SEED = 1;
/** The users of every run, the demo's and choose's: 200 thinking 5 s, with a 1 s timeout. */
const USERS = ["-clients", "200", "-lambda", "5", "-timeout", "1s"];
/** The demo's users: with reports every second, and the seed of their draws. */
export const demoUsers = (seed: number | string) => [...USERS, "-interval", "1s", "-seed", String(seed)];
export const demoFlags = (seed: number | string) => [
  ...["-strategies", "fixed,full-jitter", "-observe", "90s"],
  ...["-client-args", demoUsers(seed).join(" ")],
];
export const FAULTS = ["stop@15s+20s", "spike@15s+10s*3"];

/**
 * Where choose -validate runs its winner and the named loser (fixed retry) on the real service
 * (-target), for the same users: the services whose scenarios differ most past saturation.
 */
export const CHOOSE_ON = ["gunicorn-sync", "gunicorn-gthread", "nginx-limit-conn", "haproxy-maxconn-queue"];
export const CHOOSE_SYSTEM = USERS;

/** The service running now, stopped by its process groups on Ctrl-C too: they are detached, so the terminal's SIGINT misses them. */
export const interruptible: { running: ZooService | undefined } = { running: undefined };
/** While a demo or choose runs in this process. */
let inProgram = false;

/** Ctrl-C (or SIGTERM) stops the service running now and exits 130, or leaves it to a program that handles it. */
export function stopOnInterrupt(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      // A program that listens for it (the demo; choose while it validates) stops its own processes and returns 130.
      if (inProgram && process.listenerCount(signal) > 1) return;
      void (interruptible.running?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
    });
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
export async function onTheRealService(entry: ZooEntry, scenarioFile: string, fault: string, dir: string, seed = DEMO_SEED) {
  mkdirSync(dir);
  const target = await entry.command(dir);
  const out = join(RUNS_DIR, entry.name, fault, `seed-${seed}`);
  const args = [scenarioFile, ...demoFlags(seed), "-faults", fault, "-target", target.url, "-target-cmd", target.command, "-out", out];
  process.stderr.write(`real-services: ${entry.name}: demo ${fault}\n`);
  const sampling = sampleKernelCounters();
  const code = await runProgram(demoMain, args, process.stderr).finally(() => sampling.stop());
  if (code !== 0) throw new Error(`demo ${args.join(" ")} ended with ${code}`);
  const summary = latestSummary(out) as {
    settings: {
      target: { baselineMs: object; atBaselineWithinMs: number };
      predicted: { strategy: string; metrics?: Metrics; why?: string }[];
    };
    results: { strategy: string; metrics: Metrics; phases: { resumeAtMs: number } }[];
  };
  const figures = (metrics: Metrics) => ({
    verdict: metrics.verdict,
    serverBackMs: metrics.serverRecoveryMs ?? null,
    clientsBackMs: metrics.clientRecoveryMs ?? null,
    why: metrics.why,
  });
  const runDir = join(out, readdirSync(out).sort().at(-1)!);
  const phasesOf = (strategy: string) => summary.results.find((result) => result.strategy === strategy)!.phases;
  return {
    fault,
    seed,
    baselineMs: summary.settings.target.baselineMs,
    atBaselineWithinMs: summary.settings.target.atBaselineWithinMs,
    strategies: summary.results.map(({ strategy, metrics }) => {
      const prediction = summary.settings.predicted.find((predicted) => predicted.strategy === strategy);
      return {
        strategy,
        real: figures(metrics),
        watcher: watcherBlocks(join(runDir, `${strategy}.watcher.jsonl`), phasesOf(strategy)),
        kernel: kernelDuring(sampling.samples, join(runDir, `${strategy}.client.jsonl`), phasesOf(strategy)),
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
export async function chooseOnTheRealService(entry: ZooEntry, scenarioFile: string, dir: string) {
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

/**
 * The kernel's counters of what it did past a full listen queue (TcpExt of /proc/net/netstat,
 * system-wide: the zoo runs on a quiet machine). A SYN cookie is how it answers a SYN while its
 * queue of half-open connections is full, and completes the connection whenever an ACK carrying
 * the cookie finds room, which may be long after the client gave up.
 */
export const KERNEL_COUNTERS = ["ListenOverflows", "TCPReqQFullDoCookies", "SyncookiesSent", "SyncookiesRecv", "SyncookiesFailed"] as const;

export function kernelCounters(): Record<string, number> {
  const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const header = lines.findIndex((line) => line.startsWith("TcpExt:"));
  const names = lines[header]!.split(/\s+/).slice(1);
  const values = lines[header + 1]!.split(/\s+/).slice(1).map(Number);
  return Object.fromEntries(KERNEL_COUNTERS.map((name) => [name, values[names.indexOf(name)] ?? 0]));
}

interface KernelSample {
  readonly epochMs: number;
  readonly counters: Record<string, number>;
}

/** The kernel's counters every second until stopped, and once more then. */
function sampleKernelCounters(): { readonly samples: KernelSample[]; stop(): void } {
  const samples: KernelSample[] = [];
  const sample = () => samples.push({ epochMs: Date.now(), counters: kernelCounters() });
  sample();
  const timer = setInterval(sample, 1000);
  return {
    samples,
    stop: () => {
      clearInterval(timer);
      sample();
    },
  };
}

/**
 * What the kernel counted during one strategy's run (from its clients' first window to their summary, the run's end),
 * and after the trouble (from the resume): the samples a second apart nearest those instants.
 */
function kernelDuring(samples: readonly KernelSample[], clientFile: string, phases: { resumeAtMs: number }) {
  // Its windows, then its summary, which ends the run.
  const lines = jsonLines(readFileSync(clientFile, "utf8").split("\n"))
    .map(({ text, line }) => parseClientLine(text, { file: clientFile, line }))
    .filter((line) => line.kind !== "not-started");
  const startEpochMs = lines[0]!.epochMs - lines[0]!.windowMs;
  const at = (epochMs: number) => [...samples].reverse().find((entry) => entry.epochMs <= epochMs)?.counters ?? samples[0]!.counters;
  const end = at(lines.at(-1)!.epochMs);
  const delta = (fromMs: number) => {
    const from = at(fromMs);
    return Object.fromEntries(KERNEL_COUNTERS.map((name) => [name, end[name]! - from[name]!]));
  };
  return { run: delta(startEpochMs), afterTrouble: delta(startEpochMs + phases.resumeAtMs) };
}

/** The blocks the watcher's answers are summed up in. */
const WATCH_BLOCK_MS = 10_000;

/** The watcher's answers after the trouble, per 10 s: how many at baseline, and their median latency (a "server back" time's evidence). */
function watcherBlocks(file: string, phases: { resumeAtMs: number }) {
  const answers = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { atMs: number; atBaseline: boolean; latencyMs: number })
    .filter((answer) => answer.atMs >= phases.resumeAtMs);
  const blocks = new Map<number, { atBaseline: number; latencies: number[] }>();
  for (const answer of answers) {
    const block = Math.floor((answer.atMs - phases.resumeAtMs) / WATCH_BLOCK_MS);
    const entry = blocks.get(block) ?? { atBaseline: 0, latencies: [] };
    entry.atBaseline += answer.atBaseline ? 1 : 0;
    entry.latencies.push(answer.latencyMs);
    blocks.set(block, entry);
  }
  return [...blocks.entries()].map(([block, { atBaseline, latencies }]) => ({
    fromS: (block * WATCH_BLOCK_MS) / 1000,
    answers: latencies.length,
    atBaseline,
    latencyP50Ms: percentile(ascending(latencies), 0.5) ?? null,
  }));
}

const ascending = (values: number[]) => values.sort((a, b) => a - b);

/** The summary.json of a program's latest results folder under `out` (results/<time>/, choose-<time>/). */
function latestSummary(out: string): unknown {
  return JSON.parse(readFileSync(join(out, readdirSync(out).sort().at(-1)!, "summary.json"), "utf8"));
}

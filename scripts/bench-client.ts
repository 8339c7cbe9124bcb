/**
 * `npm run bench -- client`: what the client costs and how many simulated users it keeps
 * on schedule, against the project's server on the same 2-core machine. Prints figures;
 * asserts nothing. Every process is stopped by its own pid, also on failure or Ctrl-C.
 *
 * The server runs with a limit far above the load (-limit 1000000), so its delay stays
 * 100 ms and the client alone is measured. A user sends, waits ~100 ms for the answer,
 * then thinks for lambda on average, so N users should achieve N / (lambda + 0.1 s).
 *
 * Rows: one thread up to 40 000 users, then worker threads (-workers) up to 80 000; the
 * capacity target is 60 000. `npx tsx scripts/bench-client.ts 60000x2 40000` measures only
 * the rows named (users, x worker threads), without the rest.
 *
 * The capacity table: for each thread count from 1 to the cores, the largest herd whose
 * achieved OK rate stays within 2 % of the expected, against `./server -limit 10000000`, with
 * the lateness p99 of its sends. The per-thread figure is what `-workers auto` relies on
 * (USERS_PER_THREAD in src/options/client-workers.ts, set below the 1-thread row with a margin).
 * `npx tsx scripts/bench-client.ts capacity` measures only the table; `capacity:tiny` runs it
 * with a few hundred users and seconds-long runs, to check that it works.
 *
 * `npx tsx scripts/bench-client.ts autocannon` runs only our client beside autocannon: requests
 * per core of each, at the same rate against the same server.
 *
 * Also: how late retries go out on the wire compared with the policy's waits (the e2e tests
 * only check that no retry is early), and a long storm's memory.
 */
import { createServer } from "node:http";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { parseClientLine } from "../src/contracts/client-line.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { TrackedPrograms } from "./tracked-programs.ts";
import { cpuSeconds, memoryMb } from "./proc-usage.ts";
import { USERS_PER_THREAD } from "../src/options/client-workers.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const LAMBDA_S = 10;
const SERVICE_S = 0.1;
const WARM_UP_S = 10;
const MEASURE_S = 60;
const CAPACITY_TOLERANCE = 0.02;

const programs = new TrackedPrograms();
const stopAll = () => programs.killAll();

const start = (name: string, args: readonly string[]): ChildProgram =>
  programs.start(name, resolve(REPO_ROOT, name), args, { cwd: REPO_ROOT });

/** The /api URL a server started with `-listen 127.0.0.1:0` says it listens on. */
async function apiUrl(server: ChildProgram): Promise<string> {
  const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 30_000 });
  return `http://127.0.0.1:${/:(\d+)\/api/.exec(line)![1]}/api`;
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

interface ClientRun {
  clients: number;
  workers: number;
  expectedPerSec: number;
  achievedPerSec: number;
  clientCores: number;
  cpuMsPer1000: number;
  rssMb: number;
  peakMb: number;
  failures: number;
  /** The largest lateness p99 of the measured windows, ms (how late the client sent). */
  latenessP99Ms: number;
  /** Measured windows the client marked as behind. */
  behindWindows: number;
}

interface Timing {
  readonly warmUpS: number;
  readonly measureS: number;
}

async function measure(
  url: string,
  clients: number,
  workers: number,
  timing: Timing = { warmUpS: WARM_UP_S, measureS: MEASURE_S },
): Promise<ClientRun> {
  const client = start("client", [
    "-workers",
    String(workers),
    "-url",
    url,
    "-clients",
    String(clients),
    "-lambda",
    String(LAMBDA_S),
    "-json",
    "-interval",
    `${Math.min(5, timing.measureS)}s`, // the windows read below assume this interval
    "-duration",
    `${timing.warmUpS + timing.measureS + 1}s`,
    "-seed",
    "1",
  ]);
  try {
    await client.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 });
    await sleep(timing.warmUpS * 1000);
    const cpuBefore = cpuSeconds(client.pid);
    await sleep(timing.measureS * 1000);
    const cpuAfter = cpuSeconds(client.pid);
    const memory = memoryMb(client.pid);
    await client.exited;
    // The measured windows: every window after the warm-up's, counted by window, not by the
    // line's arrival (the first window's line can come just after the warm-up's sleep).
    const intervalS = Math.min(5, timing.measureS);
    const windows = client.stdout
      .map((line, index) => parseClientLine(line.text, { file: "the client's stdout", line: index + 1 }))
      .flatMap((window) => (window.kind === "window" ? [window] : []))
      .slice(Math.ceil(timing.warmUpS / intervalS))
      .filter((window) => window.partial !== true);
    const ok = windows.reduce((sum, window) => sum + window.ok, 0);
    const seconds = windows.reduce((sum, window) => sum + window.windowMs, 0) / 1000;
    const failures = windows.reduce((sum, window) => sum + window.errors + window.timedout, 0);
    const cpu = cpuAfter - cpuBefore;
    return {
      clients,
      workers,
      expectedPerSec: clients / (LAMBDA_S + SERVICE_S),
      achievedPerSec: ok / seconds,
      clientCores: cpu / timing.measureS,
      cpuMsPer1000: (cpu * 1000 * 1000) / Math.max(1, ok),
      rssMb: memory.rssMb,
      peakMb: memory.peakMb,
      failures,
      latenessP99Ms: Math.max(0, ...windows.map((window) => window.lateness?.p99 ?? 0)),
      behindWindows: windows.filter((window) => window.behind === true).length,
    };
  } finally {
    await client.stop();
  }
}

/**
 * A long retry storm: the server is stopped (SIGSTOP) and 2 000 users retry every 100 ms
 * after a 200 ms timeout, ~6 500 timeouts a second. RSS every 10 s should stay flat.
 */
async function storm(): Promise<void> {
  const server = start("server", ["-listen", "127.0.0.1:0", "-report-interval", "1h", "-backlog", "64"]);
  try {
    const url = await apiUrl(server);
    server.signal("SIGSTOP");
    const client = start("client", [
      "-url",
      url,
      "-clients",
      "2000",
      "-lambda",
      "1",
      "-timeout",
      "200ms",
      "-json",
      "-interval",
      "10s",
      "-duration",
      "71s",
    ]);
    try {
      await client.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 });
      const samples: string[] = [];
      for (let second = 10; second <= 70; second += 10) {
        await sleep(10_000);
        samples.push(`${second}s ${memoryMb(client.pid).rssMb.toFixed(0)} MB`);
      }
      await client.exited;
      const summary = JSON.parse(client.stdout.at(-1)?.text ?? "{}") as { timedout?: number };
      process.stdout.write(
        `\nstorm (server stopped, 2000 users, 200 ms timeout): ${summary.timedout ?? "?"} timeouts in 70 s; client RSS ${samples.join(", ")}\n`,
      );
    } finally {
      await client.stop();
    }
  } finally {
    await server.stop();
  }
}

/**
 * One user against a server that always answers 503, with exponential backoff without
 * jitter (10 ms doubling): each gap between arrivals is the policy's wait plus the answer's
 * round trip plus timer lateness.
 */
async function retryTiming(): Promise<void> {
  const arrivals: number[] = [];
  const waits = [20, 40, 80, 160, 320, 640];
  let enough: () => void = () => {};
  const reached = new Promise<void>((resolveReached) => (enough = resolveReached));
  const server = createServer((_request, response) => {
    arrivals.push(performance.now());
    response.writeHead(503).end();
    if (arrivals.length > waits.length) enough();
  });
  await new Promise<void>((resolveListen) => server.listen({ host: "127.0.0.1", port: 0 }, resolveListen));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const args = ["-url", `http://127.0.0.1:${port}/api`, "-clients", "1", "-lambda", "0.01", "-seed", "1", "-interval", "1h"];
  const client = start("client", [...args, "-strategy", "exponential", "-min-delay", "10ms", "-backoff-factor", "2", "-jitter", "0"]);
  try {
    await Promise.race([reached, client.exited.then(() => Promise.reject(new Error(`client exited early${client.said()}`)))]);
  } finally {
    await client.stop();
    server.close();
    server.closeAllConnections();
  }
  const lateness = waits.map((wait, index) => arrivals[index + 1]! - arrivals[index]! - wait);
  const sorted = [...lateness].sort((a, b) => a - b);
  process.stdout.write(
    `\nretry timing on the wire (exponential, 10 ms doubling, 503 at once): lateness of each retry past its wait ` +
      `${lateness.map((late, index) => `${waits[index]}ms+${late.toFixed(1)}`).join(", ")}; ` +
      `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms\n`,
  );
}

/** The rows to measure: users and worker threads. */
const DEFAULT_ROWS: readonly (readonly [number, number])[] = [
  [1_000, 1],
  [10_000, 1],
  [20_000, 1],
  [40_000, 1],
  [40_000, 2],
  [60_000, 2],
  [80_000, 2],
];
const CAPACITY_TARGET = 60_000;
/** Issue 37's goal for the client's memory, peak RSS per user. */
const MEMORY_PER_USER_GOAL_KB = 3;

function requestedRows(): (readonly [number, number])[] | undefined {
  const args = process.argv.slice(2).filter((argument) => argument !== "--");
  if (args.length === 0) return undefined;
  return args.map((argument) => {
    const match = /^(\d+)(?:x(\d+))?$/.exec(argument);
    if (match === null) throw new Error(`bench-client: rows are users or usersxworkers, e.g. 60000x2; got ${argument}`);
    return [Number(match[1]), Number(match[2] ?? 1)] as const;
  });
}

async function main(rows: readonly (readonly [number, number])[]): Promise<void> {
  const server = start("server", ["-listen", "127.0.0.1:0", "-limit", "1000000", "-report-interval", "1h"]);
  try {
    const url = await apiUrl(server);
    process.stdout.write(
      `client benchmark: lambda ${LAMBDA_S}s, ${WARM_UP_S}s warm-up, ${MEASURE_S}s measured per run; expected rate N / (lambda + ${SERVICE_S}s)\n\n` +
        "clients  threads  expected/s  achieved/s  deviation  client cores  CPU ms/1000 req  RSS MB  peak MB  failures\n",
    );
    let capacity = 0;
    let largestHeld: { clients: number; workers: number; peakMb: number } | undefined;
    // Past a failure, more users on as many threads would fail too.
    const failedAt = new Map<number, number>();
    for (const [clients, workers] of rows) {
      if (clients >= (failedAt.get(workers) ?? Infinity)) continue;
      const result = await measure(url, clients, workers);
      const deviation = result.achievedPerSec / result.expectedPerSec - 1;
      process.stdout.write(
        `${String(clients).padStart(7)}  ${String(workers).padStart(7)}  ${result.expectedPerSec.toFixed(1).padStart(10)}  ${result.achievedPerSec.toFixed(1).padStart(10)}  ` +
          `${(deviation * 100).toFixed(2).padStart(8)}%  ${result.clientCores.toFixed(3).padStart(12)}  ${result.cpuMsPer1000.toFixed(1).padStart(15)}  ` +
          `${result.rssMb.toFixed(0).padStart(6)}  ${result.peakMb.toFixed(0).padStart(7)}  ${String(result.failures).padStart(8)}\n`,
      );
      if (Math.abs(deviation) > CAPACITY_TOLERANCE || result.failures > 0) failedAt.set(workers, clients);
      else {
        capacity = Math.max(capacity, clients);
        // The first of equal herds, on the fewest threads: a thread's own memory spread over the most users.
        if (clients > (largestHeld?.clients ?? 0)) largestHeld = { clients, workers, peakMb: result.peakMb };
      }
    }
    process.stdout.write(
      `\ncapacity: ${capacity} clients keep the achieved rate within ${CAPACITY_TOLERANCE * 100}% of expected (target >= ${CAPACITY_TARGET})\n`,
    );
    if (largestHeld !== undefined) {
      // Peak RSS (VmHWM, kB) over users; the largest herd that held spreads the process's own share thinnest.
      const perUserKb = (largestHeld.peakMb * 1024) / largestHeld.clients;
      process.stdout.write(
        `memory per user at ${largestHeld.clients} clients on ${largestHeld.workers} thread(s) (the largest herd that held): ${perUserKb.toFixed(2)} KB of peak RSS, ` +
          `goal <= ${MEMORY_PER_USER_GOAL_KB} KB: ${perUserKb <= MEMORY_PER_USER_GOAL_KB ? "met" : "missed"}\n`,
      );
    }
  } finally {
    await server.stop();
    stopAll();
  }
}

/** How the capacity search runs: its first herd per thread, its ceiling, its runs' lengths. */
interface CapacitySettings extends Timing {
  readonly firstUsersPerThread: number;
  readonly maxUsers: number;
  /** Runs per thread count at most: doubling up to the first failure, then halving the gap. */
  readonly maxRunsPerThreads: number;
}

const CAPACITY: CapacitySettings = { firstUsersPerThread: 20_000, maxUsers: 400_000, maxRunsPerThreads: 6, warmUpS: 5, measureS: 20 };
/** To check that the table works, not to measure: a few hundred users, seconds-long runs. */
const CAPACITY_TINY: CapacitySettings = { firstUsersPerThread: 100, maxUsers: 400, maxRunsPerThreads: 2, warmUpS: 1, measureS: 2 };

/**
 * The capacity table: for each thread count, the largest herd (found by doubling, then
 * bisecting) whose achieved OK rate stays within CAPACITY_TOLERANCE of the expected with no
 * failure and no window the client marked as behind. Bounded: at most maxRunsPerThreads
 * runs of warmUpS + measureS per thread count.
 */
async function capacityTable(settings: CapacitySettings): Promise<void> {
  const cores = availableParallelism();
  const server = start("server", ["-listen", "127.0.0.1:0", "-limit", "10000000", "-report-interval", "1h"]);
  try {
    const url = await apiUrl(server);
    const boundS = cores * settings.maxRunsPerThreads * (settings.warmUpS + settings.measureS + 5);
    process.stdout.write(
      `\ncapacity table: server -limit 10000000, lambda ${LAMBDA_S}s, within ${CAPACITY_TOLERANCE * 100}% of N / (lambda + ${SERVICE_S}s); ` +
        `threads 1 to ${cores} (the cores); at most ${settings.maxRunsPerThreads} runs of ${settings.warmUpS}s + ${settings.measureS}s per row ` +
        `(bounded by about ${Math.ceil(boundS / 60)} min)\n\n` +
        "threads  largest herd within 2%  achieved/s  expected/s  lateness p99  first herd beyond  its deviation  its lateness p99  its behind windows\n",
    );
    const within = (run: ClientRun) =>
      Math.abs(run.achievedPerSec / run.expectedPerSec - 1) <= CAPACITY_TOLERANCE && run.failures === 0 && run.behindWindows === 0;
    for (let threads = 1; threads <= cores; threads++) {
      let good: ClientRun | undefined;
      let bad: ClientRun | undefined;
      let users = settings.firstUsersPerThread * threads;
      for (let runs = 0; runs < settings.maxRunsPerThreads && users <= settings.maxUsers; runs++) {
        const run = await measure(url, users, threads, settings);
        if (within(run)) good = run;
        else bad = run;
        const next =
          bad === undefined ? users * 2 : good === undefined ? Math.floor(users / 2) : Math.round((good.clients + bad.clients) / 2);
        // Steps below 5 % of the herd are below what a run's noise can tell apart.
        if (good !== undefined && bad !== undefined && bad.clients - good.clients <= Math.max(1, good.clients * 0.05)) break;
        if (next < 1 || next === users) break;
        users = next;
      }
      const ms = (value: number | undefined) => (value === undefined ? "-" : `${value.toFixed(1)} ms`);
      const deviation = bad === undefined ? "-" : `${((bad.achievedPerSec / bad.expectedPerSec - 1) * 100).toFixed(2)}%`;
      process.stdout.write(
        `${String(threads).padStart(7)}  ${String(good?.clients ?? "none").padStart(22)}  ${(good?.achievedPerSec.toFixed(1) ?? "-").padStart(10)}  ` +
          `${(good?.expectedPerSec.toFixed(1) ?? "-").padStart(10)}  ${ms(good?.latenessP99Ms).padStart(12)}  ${String(bad?.clients ?? "-").padStart(17)}  ` +
          `${deviation.padStart(13)}  ${ms(bad?.latenessP99Ms).padStart(16)}  ${String(bad?.behindWindows ?? "-").padStart(18)}\n`,
      );
    }
    process.stdout.write(
      `\n-workers auto counts USERS_PER_THREAD = ${USERS_PER_THREAD} users per thread (src/options/client-workers.ts): keep it below the 1-thread row, with a margin.\n`,
    );
  } finally {
    await server.stop();
    stopAll();
  }
}

/** The users of our client's run beside autocannon: 4 000 requests a second at lambda 10 s. */
const BESIDE_AUTOCANNON_USERS = 40_000;
const BESIDE_AUTOCANNON_S = 20;

/**
 * Our client's requests per core beside autocannon's (an npm load generator, keep-alive
 * connections, each sending its next request on the answer), at about the same rate against
 * the same server (100 ms, -limit 10000000): autocannon with as many connections as our
 * users keep in flight (rate x 100 ms). Each side's CPU is its whole process's (utime + stime),
 * ours over its measured windows, autocannon's over its run from GNU time, start-up included.
 */
async function besideAutocannon(): Promise<void> {
  const server = start("server", ["-listen", "127.0.0.1:0", "-limit", "10000000", "-report-interval", "1h"]);
  try {
    const url = await apiUrl(server);
    const ours = await measure(url, BESIDE_AUTOCANNON_USERS, 1, { warmUpS: 5, measureS: BESIDE_AUTOCANNON_S });
    const connections = Math.max(1, Math.round(ours.achievedPerSec * SERVICE_S));
    const autocannon = resolve(REPO_ROOT, "node_modules/autocannon/autocannon.js");
    const cannon = new ChildProgram("autocannon", "/usr/bin/time", [
      ...["-f", "bench-time %U %S", process.execPath, autocannon],
      ...["-c", String(connections), "-d", String(BESIDE_AUTOCANNON_S), "-j", url],
    ]);
    programs.track(cannon);
    const exit = await cannon.exited;
    const cpu = cannon.stderr.map((entry) => /^bench-time ([\d.]+) ([\d.]+)$/.exec(entry.text)).find((match) => match !== null);
    if (exit !== 0 || cpu === undefined) {
      process.stdout.write(`\nautocannon failed (${exit})${cannon.said()}\n`);
      return;
    }
    const result = JSON.parse(cannon.stdout.map((entry) => entry.text).join("\n")) as { requests: { total: number; average: number } };
    const cannonCores = (Number(cpu[1]) + Number(cpu[2])) / BESIDE_AUTOCANNON_S;
    const oursPerCore = ours.achievedPerSec / ours.clientCores;
    const cannonPerCore = result.requests.average / cannonCores;
    process.stdout.write(
      `\nbeside autocannon, against ./server -limit 10000000 (100 ms), ${BESIDE_AUTOCANNON_S} s each:\n` +
        `  ours: ${BESIDE_AUTOCANNON_USERS} users, ${ours.achievedPerSec.toFixed(0)} OK/s on ${ours.clientCores.toFixed(3)} cores: ${oursPerCore.toFixed(0)} requests per core-second\n` +
        `  autocannon -c ${connections}: ${result.requests.average.toFixed(0)} requests/s on ${cannonCores.toFixed(3)} cores (start-up included): ${cannonPerCore.toFixed(0)} requests per core-second\n` +
        `  ours / autocannon: ${(oursPerCore / cannonPerCore).toFixed(2)}x per core\n`,
    );
  } finally {
    await server.stop();
    stopAll();
  }
}

const mode = process.argv.slice(2).find((argument) => argument.startsWith("capacity") || argument === "autocannon");
if (mode === "autocannon") {
  await besideAutocannon();
} else if (mode !== undefined) {
  await capacityTable(mode === "capacity:tiny" ? CAPACITY_TINY : CAPACITY);
} else {
  const rows = requestedRows();
  await main(rows ?? DEFAULT_ROWS);
  if (rows === undefined) {
    await capacityTable(CAPACITY);
    await besideAutocannon();
    await retryTiming();
    await storm();
  }
}

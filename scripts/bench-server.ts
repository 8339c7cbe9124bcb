/**
 * Server benchmark (`npm run bench -- server`). Prints figures, asserts nothing; exits 0
 * unless something broke. Every server runs on an ephemeral loopback port in its own
 * process group and is stopped by that group's id, also on error and on SIGINT.
 *
 *   a. CPU of the server process per request under open-loop load (100 and 2 000 req/s),
 *      generated with undici over uncapped keep-alive connections.
 *   b. CPU and RSS with 10 000 requests in service and no arrivals.
 *   c. Response-time accuracy at low load (20 req/s, baseDelay 100 ms), with a raw client.
 *   d. Time to exit on SIGTERM with 2 000 requests in service.
 *
 * Server CPU is utime+stime of /proc/<pid>/stat over the measured window. The load is
 * generated from this process, which shares the machine's cores with the server.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request } from "undici";
import { percentile } from "../src/model/percentile.ts";
import { CLOCK_TICKS_PER_SECOND, cpuSeconds, machineBusySeconds, memoryMb } from "./proc-usage.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");

const WARMUP_MS = 2_000;
const MEASURE_MS = 10_000;
/** How long the load generator waits for the last answers once the window has closed. */
const DRAIN_LIMIT_MS = 5_000;
/** The whole benchmark takes about 75 s; past this something is stuck. */
const WATCHDOG_MS = 180_000;

// ---------------------------------------------------------------- processes

interface BenchServer {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** Process groups of the servers started and not yet seen to exit (group id = server pid). */
const liveGroups = new Set<number>();

function killGroup(pid: number, signal: NodeJS.Signals): void {
  if (!liveGroups.has(pid)) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

async function stopServer(server: BenchServer): Promise<void> {
  killGroup(server.pid, "SIGTERM");
  const gone = await Promise.race([server.exited.then(() => true), sleep(2_000).then(() => false)]);
  if (!gone) {
    killGroup(server.pid, "SIGKILL");
    await server.exited;
  }
}

/** Last resort (error, SIGINT, exit): synchronous SIGKILL of every group still running. */
function killAllNow(): void {
  for (const pid of liveGroups) killGroup(pid, "SIGKILL");
}

async function startServer(args: readonly string[]): Promise<BenchServer> {
  const child = spawn(resolve(REPO_ROOT, "server"), ["-listen", "127.0.0.1:0", ...args], {
    cwd: REPO_ROOT,
    detached: true,
    // The per-second report line goes to /dev/null: it costs the server what it always costs.
    stdio: ["ignore", "ignore", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start ./server");
  liveGroups.add(pid);
  const exited = new Promise<void>((resolveExit) =>
    child.once("exit", () => {
      liveGroups.delete(pid);
      resolveExit();
    }),
  );
  let stderr = "";
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`./server did not say where it listens; stderr: ${stderr}`)), 20_000);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr += chunk;
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/api \(pid (\d+)\)/.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        if (Number(match[2]) !== pid) reject(new Error(`server pid ${match[2]} is not the spawned pid ${pid}`));
        resolvePort(Number(match[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`./server exited early; stderr: ${stderr}`));
    });
  }).catch((error: unknown) => {
    killGroup(pid, "SIGKILL");
    throw error;
  });
  return { pid, port, url: `http://127.0.0.1:${port}/api`, child, exited };
}

// ---------------------------------------------------------------- /proc

interface CpuSample {
  readonly cpuSeconds: number;
  readonly atMs: number;
}

/** CPU time of a process so far, with the time it was read. */
function sampleCpu(pid: number): CpuSample {
  return { cpuSeconds: cpuSeconds(pid), atMs: performance.now() };
}

interface CpuWindow {
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  readonly cores: number;
}

function cpuBetween(from: CpuSample, to: CpuSample): CpuWindow {
  const used = to.cpuSeconds - from.cpuSeconds;
  const wallSeconds = (to.atMs - from.atMs) / 1000;
  return { cpuSeconds: used, wallSeconds, cores: used / wallSeconds };
}

interface WindowFigures {
  /** The server process. */
  readonly server: CpuWindow;
  /** This process (the load generator). */
  readonly benchCores: number;
  /** Everything else on the machine: high values mean the figures were disturbed. */
  readonly otherCores: number;
}

/** Starts a measured window; call the result to close it. */
function openWindow(pid: number): () => WindowFigures {
  const serverFrom = sampleCpu(pid);
  const benchFrom = process.cpuUsage();
  const machineFrom = machineBusySeconds();
  return () => {
    const server = cpuBetween(serverFrom, sampleCpu(pid));
    const bench = process.cpuUsage(benchFrom);
    const machineCores = (machineBusySeconds() - machineFrom) / server.wallSeconds;
    const benchCores = (bench.user + bench.system) / 1e6 / server.wallSeconds;
    return { server, benchCores, otherCores: Math.max(0, machineCores - server.cores - benchCores) };
  };
}

/** Above this much CPU used by other processes during a window, its figures get a warning. */
const BUSY_MACHINE_CORES = 0.1;

function describeWindow(figures: WindowFigures): string {
  const busy = figures.otherCores > BUSY_MACHINE_CORES ? " (WARNING: machine busy, figures disturbed)" : "";
  return `this process ${fmt(figures.benchCores, 3)} cores, other processes ${fmt(figures.otherCores, 3)} cores${busy}`;
}

// ---------------------------------------------------------------- load

interface Stats {
  readonly concurrency: number;
  readonly served: number;
  readonly admitted: number;
}

async function getStats(server: BenchServer, dispatcher: Agent): Promise<Stats> {
  const response = await request(`http://127.0.0.1:${server.port}/stats`, { dispatcher });
  return (await response.body.json()) as Stats;
}

interface LoadResult {
  /** Requests sent inside the measured window. */
  sent: number;
  /** Answers (200 OK) received inside the measured window. */
  ok: number;
  /** Failures (non-200 or transport errors) during the whole run, warm-up included. */
  failed: number;
  firstError: string | undefined;
  /** Response time of every OK answer to a request sent inside the window, ms. */
  readonly latenciesMs: number[];
}

/** Sends one GET and resolves with the status code once the whole answer is in. */
type Send = () => Promise<number>;

/** undici over keep-alive connections without a cap (as ./client does). */
function undiciSender(url: string): { send: Send; close: () => Promise<void> } {
  const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  return {
    send: async () => {
      const { statusCode, body } = await request(url, { dispatcher: agent });
      await body.text();
      return statusCode;
    },
    // destroy, not close: close would wait for answers that may never come.
    close: () => agent.destroy().catch(() => {}),
  };
}

/**
 * A minimal HTTP/1.1 client on raw keep-alive sockets, one request at a time per socket, a
 * new socket when none is idle. It adds far less of its own time than undici, so the
 * response times it sees are mostly the server's (used for the accuracy figure).
 */
function rawSender(port: number, path: string): { send: Send; close: () => Promise<void> } {
  const idle: Socket[] = [];
  const all = new Set<Socket>();
  const open = (): Socket => {
    const socket = connect({ host: "127.0.0.1", port, noDelay: true });
    socket.setEncoding("latin1");
    socket.on("error", () => {}); // surfaces as "close" below
    socket.on("close", () => {
      all.delete(socket);
      const at = idle.indexOf(socket);
      if (at >= 0) idle.splice(at, 1);
    });
    all.add(socket);
    return socket;
  };
  const send: Send = () =>
    new Promise<number>((resolveSend, reject) => {
      const socket = idle.pop() ?? open();
      let buffer = "";
      const finish = () => {
        socket.off("data", onData);
        socket.off("close", onClose);
      };
      const onClose = () => {
        finish();
        reject(new Error("connection closed before the answer"));
      };
      const onData = (chunk: string) => {
        buffer += chunk;
        const headerEnd = buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0) return;
        const head = buffer.slice(0, headerEnd);
        const length = Number(/\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1]);
        if (Number.isInteger(length)) {
          if (buffer.length < headerEnd + 4 + length) return;
        } else if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) {
          // Small answers only: complete at the last chunk (no trailers are sent).
          if (!buffer.endsWith("\r\n0\r\n\r\n")) return;
        } else {
          finish();
          socket.destroy();
          reject(new Error(`answer without a length: ${JSON.stringify(head.slice(0, 80))}`));
          return;
        }
        finish();
        if (/\r\nconnection:[ \t]*close/i.test(head)) socket.destroy();
        else idle.push(socket);
        resolveSend(Number(head.slice(9, 12)));
      };
      socket.on("data", onData);
      socket.on("close", onClose);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    });
  return {
    send,
    close: async () => {
      for (const socket of all) socket.destroy();
    },
  };
}

/**
 * Open-loop load: requests leave at fixed intervals whatever the answers do.
 * `onWindowStart`/`onWindowEnd` run at the edges of the measured window (after the
 * warm-up); the call returns once every answer is in.
 */
async function openLoopLoad(
  send: Send,
  ratePerSecond: number,
  warmupMs: number,
  measureMs: number,
  onWindowStart: () => void,
  onWindowEnd: () => void,
  okStatus = 200,
): Promise<LoadResult> {
  const result: LoadResult = { sent: 0, ok: 0, failed: 0, firstError: undefined, latenciesMs: [] };
  const inFlight = new Set<Promise<void>>();
  let inWindow = false;
  const intervalMs = 1000 / ratePerSecond;
  const start = performance.now();
  const windowStart = start + warmupMs;
  const end = windowStart + measureMs;
  let windowOpened = false;

  const fire = () => {
    const counted = inWindow;
    if (counted) result.sent++;
    const sentAt = performance.now();
    const done = send()
      .then((statusCode) => {
        const latency = performance.now() - sentAt;
        if (statusCode !== okStatus) throw new Error(`HTTP ${statusCode}`);
        if (inWindow) result.ok++;
        if (counted) result.latenciesMs.push(latency);
      })
      .catch((error: unknown) => {
        result.failed++;
        result.firstError ??= error instanceof Error ? error.message : String(error);
      })
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };

  let sent = 0;
  for (;;) {
    const now = performance.now();
    if (!windowOpened && now >= windowStart) {
      windowOpened = true;
      inWindow = true;
      onWindowStart();
    }
    if (now >= end) break;
    // Send everything due by now (a late wake sends its backlog at once: open loop).
    while (start + sent * intervalMs <= now) {
      fire();
      sent++;
    }
    const nextAt = Math.min(start + sent * intervalMs, windowOpened ? end : windowStart);
    await sleep(Math.max(0, nextAt - performance.now()));
  }
  inWindow = false;
  onWindowEnd();
  // Answers still due arrive within a delay or so; never wait for a server that is stuck.
  const drained = await Promise.race([Promise.all(inFlight).then(() => true), sleep(DRAIN_LIMIT_MS).then(() => false)]);
  if (!drained) throw new Error(`${inFlight.size} requests still unanswered ${DRAIN_LIMIT_MS / 1000} s after the load stopped`);
  return result;
}

// ---------------------------------------------------------------- scenarios

interface Row {
  readonly metric: string;
  readonly measured: string;
  readonly target: string;
  /** "pass", "FAIL" or "info". */
  readonly verdict: string;
}

const rows: Row[] = [];

function addRow(metric: string, measured: string, target = "", pass?: boolean): void {
  rows.push({ metric, measured, target: target === "" ? "-" : target, verdict: pass === undefined ? "info" : pass ? "pass" : "FAIL" });
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** The nearest-rank p-th percentile (p in percent) of sorted samples; NaN when there are none. */
const percentileOf = (sorted: readonly number[], p: number): number => percentile(sorted, p / 100) ?? NaN;

const fmt = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : String(value));

/**
 * a. One server, three phases of open-loop load: 100 req/s on a fresh process, 2 000 req/s,
 * then 100 req/s again once the JIT has seen ~25 000 requests. `-limit` is lifted so that
 * 2 000 req/s x 100 ms = 200 requests in service keep the base delay: with the default
 * limit of 30 the model itself collapses at that rate (delay(c) grows faster than c), and
 * that would measure the retry storm, not the server's cost per request.
 */
async function benchCpu(): Promise<void> {
  const server = await startServer(["-baseDelay", "100ms", "-limit", "1000000"]);
  try {
    await cpuAtRate(server, 100, "fresh process", 0.05);
    await cpuAtRate(server, 2_000, "");
    await cpuAtRate(server, 100, "after the 2 000 req/s phase", 0.05);
  } finally {
    await stopServer(server);
  }
}

async function cpuAtRate(server: BenchServer, ratePerSecond: number, note: string, target?: number): Promise<void> {
  const label = note === "" ? `${ratePerSecond} req/s` : `${ratePerSecond} req/s, ${note}`;
  say(`a. CPU at ${label}: open-loop, keep-alive, ${WARMUP_MS / 1000} s warm-up + ${MEASURE_MS / 1000} s measured`);
  let closeWindow: (() => WindowFigures) | undefined;
  let figures: WindowFigures | undefined;
  const client = undiciSender(server.url);
  const load = await openLoopLoad(
    client.send,
    ratePerSecond,
    WARMUP_MS,
    MEASURE_MS,
    () => {
      closeWindow = openWindow(server.pid);
    },
    () => {
      figures = closeWindow?.();
    },
  ).finally(client.close);
  if (figures === undefined) throw new Error("measured window never ran");
  const cpu = figures.server;
  const perRequestUs = (cpu.cpuSeconds * 1e6) / load.ok;
  const sorted = load.latenciesMs.sort((a, b) => a - b);
  say(
    `   sent ${load.sent}, got ${load.ok} OK in ${fmt(cpu.wallSeconds, 2)} s (${fmt(load.ok / cpu.wallSeconds, 0)} OK/s), ` +
      `${load.failed} failed${load.firstError === undefined ? "" : ` (first: ${load.firstError})`}; ` +
      `response time p50 ${fmt(percentileOf(sorted, 50), 1)} ms, p99 ${fmt(percentileOf(sorted, 99), 1)} ms`,
  );
  say(`   server ${fmt(cpu.cpuSeconds, 2)} CPU s; ${describeWindow(figures)}`);
  if (load.failed > 0) throw new Error(`${load.failed} requests failed at ${ratePerSecond} req/s: ${load.firstError}`);
  addRow(
    `server CPU at ${label} (cores)`,
    fmt(cpu.cores, 4),
    target === undefined ? "" : `<= ${target}`,
    target === undefined ? undefined : cpu.cores <= target,
  );
  addRow(`server CPU per request at ${label} (us)`, fmt(perRequestUs, 0));
}

const IDLE_CONNECTIONS = 10_000;
/** Connection attempts in flight at once, well under the listen backlog. */
const CONNECT_BATCH = 500;
/** Pause between reaching 10 000 in service and the measured window. */
const SETTLE_MS = 2_000;

async function benchIdleInService(): Promise<void> {
  say(`b. ${IDLE_CONNECTIONS} requests in service (baseDelay 1h), no arrivals: ${MEASURE_MS / 1000} s measured`);
  const server = await startServer(["-baseDelay", "1h"]);
  const sockets: Socket[] = [];
  const statsAgent = new Agent({ connections: 1 });
  let socketErrors = 0;
  try {
    const connectStart = performance.now();
    for (let opened = 0; opened < IDLE_CONNECTIONS;) {
      const batch = Math.min(CONNECT_BATCH, IDLE_CONNECTIONS - opened);
      const connects: Promise<void>[] = [];
      for (let i = 0; i < batch; i++) {
        const socket = connect({ host: "127.0.0.1", port: server.port });
        sockets.push(socket);
        socket.on("error", () => {
          socketErrors++;
        });
        connects.push(
          new Promise<void>((resolveConnect, reject) => {
            socket.once("connect", () => {
              socket.write("GET /api HTTP/1.1\r\nHost: x\r\n\r\n");
              resolveConnect();
            });
            socket.once("error", reject);
          }),
        );
      }
      await Promise.all(connects);
      opened += batch;
    }
    let stats = await getStats(server, statsAgent);
    const deadline = performance.now() + 30_000;
    while (stats.concurrency < IDLE_CONNECTIONS) {
      if (performance.now() > deadline) throw new Error(`only ${stats.concurrency} of ${IDLE_CONNECTIONS} requests reached service`);
      await sleep(100);
      stats = await getStats(server, statsAgent);
    }
    say(
      `   ${stats.concurrency} in service ${fmt((performance.now() - connectStart) / 1000, 1)} s after the first connect; settling ${SETTLE_MS / 1000} s`,
    );
    await sleep(SETTLE_MS);
    const closeWindow = openWindow(server.pid);
    await sleep(MEASURE_MS);
    const figures = closeWindow();
    const rssMb = memoryMb(server.pid).rssMb;
    const after = await getStats(server, statsAgent);
    const cpu = figures.server;
    say(
      `   server ${fmt(cpu.cpuSeconds, 2)} CPU s in ${fmt(cpu.wallSeconds, 2)} s; RSS ${fmt(rssMb, 1)} MB; ` +
        `still in service after: ${after.concurrency}; socket errors ${socketErrors}`,
    );
    say(`   ${describeWindow(figures)}`);
    if (after.concurrency !== IDLE_CONNECTIONS) throw new Error(`concurrency changed during the window: ${after.concurrency}`);
    addRow(`server CPU, ${IDLE_CONNECTIONS} in service, idle (cores)`, fmt(cpu.cores, 4), "<= 0.01", cpu.cores <= 0.01);
    addRow(`server RSS, ${IDLE_CONNECTIONS} in service (MB)`, fmt(rssMb, 1), "<= 200", rssMb <= 200);
  } finally {
    for (const socket of sockets) socket.destroy();
    await statsAgent.close().catch(() => {});
    await stopServer(server);
  }
}

/**
 * c. Response-time accuracy at low load, seen from this process with performance.now()
 * through the raw client. Reported with the round trip of an immediate answer (404) by
 * the same client: the part of the excess that is not the server's timing.
 */
async function benchAccuracy(): Promise<void> {
  const rate = 20;
  const baseDelayMs = 100;
  say(
    `c. response-time accuracy: ${rate} req/s, baseDelay ${baseDelayMs}ms, raw keep-alive HTTP/1.1 client, ` +
      `1 s warm-up + ${MEASURE_MS / 1000} s measured`,
  );
  const server = await startServer(["-baseDelay", `${baseDelayMs}ms`]);
  const probeClient = rawSender(server.port, "/nothing");
  const client = rawSender(server.port, "/api");
  try {
    const probe = await openLoopLoad(
      probeClient.send,
      rate,
      500,
      2_000,
      () => {},
      () => {},
      404,
    );
    let closeWindow: (() => WindowFigures) | undefined;
    let figures: WindowFigures | undefined;
    const load = await openLoopLoad(
      client.send,
      rate,
      1_000,
      MEASURE_MS,
      () => {
        closeWindow = openWindow(server.pid);
      },
      () => {
        figures = closeWindow?.();
      },
    );
    if (load.failed > 0 || probe.failed > 0) {
      throw new Error(`${load.failed + probe.failed} requests failed: ${load.firstError ?? probe.firstError}`);
    }
    // Exact percentiles over a sorted array of every sample (a few hundred).
    const excess = load.latenciesMs.map((ms) => ms - baseDelayMs).sort((a, b) => a - b);
    const roundTrip = probe.latenciesMs.sort((a, b) => a - b);
    const p50 = percentileOf(excess, 50);
    const p99 = percentileOf(excess, 99);
    const min = excess[0] ?? NaN;
    const max = excess[excess.length - 1] ?? NaN;
    say(
      `   ${excess.length} answers; excess over ${baseDelayMs} ms: min ${fmt(min, 3)}, p50 ${fmt(p50, 3)}, ` +
        `p99 ${fmt(p99, 3)}, max ${fmt(max, 3)} ms (exact percentiles, sorted array); ` +
        `404 round trip: p50 ${fmt(percentileOf(roundTrip, 50), 3)}, p99 ${fmt(percentileOf(roundTrip, 99), 3)} ms`,
    );
    if (figures !== undefined) say(`   server ${fmt(figures.server.cores, 4)} cores; ${describeWindow(figures)}`);
    addRow("excess response time p50 at 20 req/s (ms)", fmt(p50, 2), "<= 1", p50 <= 1);
    addRow("excess response time p99 at 20 req/s (ms)", fmt(p99, 2), "<= 5", p99 <= 5);
    addRow("excess response time max at 20 req/s (ms)", fmt(max, 2));
    addRow("  of which loopback round trip (404) p50 (ms)", fmt(percentileOf(roundTrip, 50), 2));
    if (min < 0) addRow("excess response time min (ms): answered early!", fmt(min, 3), ">= 0", false);
  } finally {
    await probeClient.close();
    await client.close();
    await stopServer(server);
  }
}

const SHUTDOWN_IN_SERVICE = 2_000;

/**
 * d. Exit on SIGTERM with thousands of requests in service: the server does not wait for
 * them and lets the kernel close their sockets. Timed from the signal to the exit seen
 * here, and to the last client connection seeing its close.
 */
async function benchShutdown(): Promise<void> {
  say(`d. SIGTERM with ${SHUTDOWN_IN_SERVICE} requests in service (baseDelay 1h)`);
  const server = await startServer(["-baseDelay", "1h"]);
  const sockets: Socket[] = [];
  const statsAgent = new Agent({ connections: 1 });
  try {
    const closed: Promise<number>[] = [];
    for (let opened = 0; opened < SHUTDOWN_IN_SERVICE; opened += CONNECT_BATCH) {
      const connects: Promise<void>[] = [];
      for (let i = 0; i < Math.min(CONNECT_BATCH, SHUTDOWN_IN_SERVICE - opened); i++) {
        const socket = connect({ host: "127.0.0.1", port: server.port });
        sockets.push(socket);
        socket.on("error", () => {});
        socket.resume();
        closed.push(new Promise((resolveClose) => socket.once("close", () => resolveClose(performance.now()))));
        connects.push(
          new Promise<void>((resolveConnect, reject) => {
            socket.once("connect", () => {
              socket.write("GET /api HTTP/1.1\r\nHost: x\r\n\r\n");
              resolveConnect();
            });
            socket.once("error", reject);
          }),
        );
      }
      await Promise.all(connects);
    }
    const deadline = performance.now() + 30_000;
    while ((await getStats(server, statsAgent)).concurrency < SHUTDOWN_IN_SERVICE) {
      if (performance.now() > deadline) throw new Error(`fewer than ${SHUTDOWN_IN_SERVICE} requests reached service`);
      await sleep(50);
    }
    await statsAgent.close();
    const signalledAt = performance.now();
    process.kill(server.pid, "SIGTERM");
    await server.exited;
    const exitMs = performance.now() - signalledAt;
    const lastCloseMs = Math.max(...(await Promise.all(closed))) - signalledAt;
    say(`   exit ${fmt(exitMs, 0)} ms after SIGTERM; last client connection closed after ${fmt(lastCloseMs, 0)} ms`);
    addRow(`exit after SIGTERM, ${SHUTDOWN_IN_SERVICE} in service (ms)`, fmt(exitMs, 0), "<= 1000", exitMs <= 1000);
    addRow("  last client connection closed (ms)", fmt(lastCloseMs, 0));
  } finally {
    for (const socket of sockets) socket.destroy();
    await stopServer(server);
  }
}

function printTable(): void {
  const header: Row = { metric: "metric", measured: "measured", target: "target", verdict: "result" };
  const all = [header, ...rows];
  const width = (key: keyof Row) => Math.max(...all.map((row) => row[key].length));
  const widths = { metric: width("metric"), measured: width("measured"), target: width("target") };
  const line = (row: Row) =>
    `${row.metric.padEnd(widths.metric)}  ${row.measured.padStart(widths.measured)}  ${row.target.padEnd(widths.target)}  ${row.verdict}`;
  say("");
  say(line(header));
  say("-".repeat(line(header).length));
  for (const row of rows) say(line(row));
}

// ---------------------------------------------------------------- main

process.on("SIGINT", () => {
  process.stderr.write("bench-server: interrupted; stopping servers\n");
  killAllNow();
  process.exit(130);
});
process.on("SIGTERM", () => {
  killAllNow();
  process.exit(143);
});
process.on("exit", killAllNow);

async function main(): Promise<void> {
  say(`server benchmark: ${process.version}, CLK_TCK ${CLOCK_TICKS_PER_SECOND}, loopback, load generated from this process`);
  const began = performance.now();
  setTimeout(() => {
    process.stderr.write(`bench-server: still running after ${WATCHDOG_MS / 1000} s; stopping servers\n`);
    killAllNow();
    process.exit(1);
  }, WATCHDOG_MS).unref();
  try {
    await benchCpu();
    await benchIdleInService();
    await benchAccuracy();
    await benchShutdown();
  } finally {
    killAllNow();
  }
  printTable();
  say(`(${fmt((performance.now() - began) / 1000, 1)} s)`);
}

main().catch((error: unknown) => {
  killAllNow();
  if (rows.length > 0) printTable();
  process.stderr.write(`bench-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

/**
 * `npm run bench -- reference`: CPU of our server and client side by side with the Go
 * programs of the article "Exponential Backoff or how not to crash a server"
 * (https://github.com/smira/exponential-backoff), measured the same way for both:
 * utime + stime from /proc/<pid>/stat over a fixed window of steady load, after a warm-up.
 * Prints figures; asserts nothing. Every process is stopped by its own pid (and group),
 * also on failure or Ctrl-C.
 *
 * Runs only when REFERENCE_BIN_DIR names a directory holding the built reference `server`
 * and `client`; otherwise it prints how to build them and exits 0, so `npm run bench` never
 * needs Go. The reference code is never part of this repository.
 *
 * The reference client always sends to http://127.0.0.1:8070/api and the reference server
 * always listens on port 8070, so every run here uses 127.0.0.1:8070; a run refuses to start
 * while that port is taken.
 *
 * Rows:
 *  1. client CPU, 20 000 users, lambda 10 s (~2 000 req/s), against our server with
 *     -limit 1000000 (it never saturates, so only the client differs);
 *  2. the same with 1 000 users (the defaults, ~100 req/s);
 *  3. server CPU at ~2 000 req/s (our client, 20 000 users): both servers with -limit 1000000,
 *     since at 2 000 req/s x 100 ms = 200 in service the article's limit of 30 diverges;
 *  4. server CPU at ~100 req/s (our client, 1 000 users), both servers at their defaults.
 *
 * Environment: REFERENCE_BIN_DIR (required to run), BENCH_REFERENCE_PASSES (default 2),
 * BENCH_REFERENCE_MEASURE_S (default 30), BENCH_REFERENCE_WARM_UP_S (default 5).
 */
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { TrackedPrograms } from "./tracked-programs.ts";
import { cpuSeconds } from "./proc-usage.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const HOST = "127.0.0.1";
const PORT = 8070;
const PASSES = Number(process.env.BENCH_REFERENCE_PASSES ?? 2);
const MEASURE_S = Number(process.env.BENCH_REFERENCE_MEASURE_S ?? 30);
const WARM_UP_S = Number(process.env.BENCH_REFERENCE_WARM_UP_S ?? 5);
const OK_LINE = /^OK: ([\d.]+) req\/sec, errors: ([\d.]+) req\/sec, timedout: ([\d.]+) req\/sec/;

const referenceDir = process.env.REFERENCE_BIN_DIR;
if (referenceDir === undefined || !existsSync(resolve(referenceDir, "server")) || !existsSync(resolve(referenceDir, "client"))) {
  process.stdout.write(
    "reference benchmark skipped: set REFERENCE_BIN_DIR to a directory holding the article's Go `server` and `client`, built outside this repository:\n" +
      "  git clone https://github.com/smira/exponential-backoff /tmp/ref-src && cd /tmp/ref-src\n" +
      '  sed -i \'s/ListenAndServe(":8070"/ListenAndServe("127.0.0.1:8070"/\' server.go   # loopback only; nothing else changes\n' +
      "  mkdir -p /tmp/ref-bin && go build -o /tmp/ref-bin/server server.go && go build -o /tmp/ref-bin/client client.go\n" +
      "  REFERENCE_BIN_DIR=/tmp/ref-bin npm run bench -- reference\n",
  );
  process.exit(0);
}
const REFERENCE_DIR = resolve(referenceDir);

const programs = new TrackedPrograms();
const stopAll = () => programs.killAll();

type Side = "ours" | "reference";

function start(side: Side, name: "server" | "client", args: readonly string[]): ChildProgram {
  const command = side === "ours" ? resolve(REPO_ROOT, name) : resolve(REFERENCE_DIR, name);
  return programs.start(`${side} ${name}`, command, args, { cwd: REPO_ROOT });
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

function canConnect(): Promise<boolean> {
  return new Promise((resolveConnect) => {
    const socket = connect({ host: HOST, port: PORT });
    socket.once("connect", () => {
      socket.destroy();
      resolveConnect(true);
    });
    socket.once("error", () => resolveConnect(false));
  });
}

/** Neither program prints a readiness line the other also prints, so both are waited for by connecting. */
async function waitListening(server: ChildProgram): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!server.running) throw new Error(`${server.name} exited before listening${server.said()}`);
    if (await canConnect()) return;
    await sleep(100);
  }
  throw new Error(`${server.name} did not listen on ${HOST}:${PORT} within 30 s${server.said()}`);
}

function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

interface Run {
  cores: number;
  okPerSec: number;
  failedPerSec: number;
}

/** Mean of the client's 5 s windows that ended inside the measured interval. */
function rates(client: ChildProgram, fromMs: number, toMs: number): { okPerSec: number; failedPerSec: number } {
  const windows = client.stdout
    .filter((line) => line.receivedAtEpochMs > fromMs && line.receivedAtEpochMs <= toMs)
    .map((line) => OK_LINE.exec(line.text))
    .filter((match) => match !== null);
  const mean = (values: number[]) => (values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length);
  return {
    okPerSec: mean(windows.map((match) => Number(match[1]))),
    failedPerSec: mean(windows.map((match) => Number(match[2]) + Number(match[3]))),
  };
}

/** Starts the server, then the client; measures `measured`'s CPU over MEASURE_S after WARM_UP_S. */
async function measure(
  server: { side: Side; args: readonly string[] },
  client: { side: Side; args: readonly string[] },
  measured: "server" | "client",
): Promise<Run> {
  if (await canConnect()) throw new Error(`${HOST}:${PORT} is already taken; the reference programs need that port`);
  const serverProgram = start(server.side, "server", server.args);
  try {
    await waitListening(serverProgram);
    const clientProgram = start(client.side, "client", client.args);
    try {
      await sleep(WARM_UP_S * 1000);
      const target = measured === "server" ? serverProgram : clientProgram;
      for (const program of [serverProgram, clientProgram]) {
        if (!program.running) throw new Error(`${program.name} exited during warm-up${program.said()}`);
      }
      const fromMs = Date.now();
      const before = cpuSeconds(target.pid);
      await sleep(MEASURE_S * 1000);
      const after = cpuSeconds(target.pid);
      const toMs = Date.now();
      // The window that ends just after the interval is mostly inside it; wait for it briefly.
      await sleep(1_000);
      return { cores: (after - before) / MEASURE_S, ...rates(clientProgram, fromMs, toMs + 1_000) };
    } finally {
      await clientProgram.stop();
    }
  } finally {
    await serverProgram.stop();
  }
}

interface Row {
  title: string;
  measured: "server" | "client";
  run(side: Side): Promise<Run>;
}

const NEVER_SATURATES = ["-listen", `${HOST}:${PORT}`, "-limit", "1000000", "-report-interval", "1h"];
const rows: Row[] = [
  {
    title: "1. client CPU, 20 000 users, lambda 10 s (~2 000 req/s); server: ours -limit 1000000",
    measured: "client",
    run: (side) => measure({ side: "ours", args: NEVER_SATURATES }, { side, args: ["-clients", "20000", "-lambda", "10"] }, "client"),
  },
  {
    title: "2. client CPU, 1 000 users, lambda 10 s (~100 req/s, defaults); server: ours -limit 1000000",
    measured: "client",
    run: (side) => measure({ side: "ours", args: NEVER_SATURATES }, { side, args: [] }, "client"),
  },
  {
    title: "3. server CPU at ~2 000 req/s (load: our client, 20 000 users); both servers -limit 1000000",
    measured: "server",
    run: (side) =>
      measure(
        { side, args: side === "ours" ? NEVER_SATURATES : ["-limit", "1000000"] },
        { side: "ours", args: ["-clients", "20000", "-lambda", "10"] },
        "server",
      ),
  },
  {
    title: "4. server CPU at ~100 req/s (load: our client, 1 000 users); both servers at defaults (limit 30)",
    measured: "server",
    run: (side) => measure({ side, args: [] }, { side: "ours", args: [] }, "server"),
  },
];

const format = (run: Run) => `${run.cores.toFixed(3)} cores (OK ${run.okPerSec.toFixed(1)}/s, failed ${run.failedPerSec.toFixed(1)}/s)`;

async function main(): Promise<void> {
  process.stdout.write(
    `reference benchmark: ${WARM_UP_S}s warm-up, ${MEASURE_S}s measured, ${PASSES} pass(es); ` +
      `reference binaries from ${REFERENCE_DIR}; CPU = utime+stime of the measured process / wall time\n` +
      "(the machine may be shared: load averages are printed before and after each row)\n",
  );
  for (const row of rows) {
    process.stdout.write(`\n${row.title}\n  load before: ${loadAverage()}\n`);
    for (let pass = 1; pass <= PASSES; pass += 1) {
      // Alternate which side goes first, so a drift in background load does not favour one side.
      const order: Side[] = pass % 2 === 1 ? ["ours", "reference"] : ["reference", "ours"];
      const results = new Map<Side, Run>();
      for (const side of order) results.set(side, await row.run(side));
      const ours = results.get("ours")!;
      const reference = results.get("reference")!;
      process.stdout.write(
        `  pass ${pass}: ours ${format(ours)}; reference ${format(reference)}; ours/reference ${(ours.cores / reference.cores).toFixed(2)}\n`,
      );
    }
    process.stdout.write(`  load after: ${loadAverage()}\n`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    stopAll();
    process.stderr.write(`bench-reference: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run soak [-- flags]`: does the server or the client crash, leak or mislead under
 * hostile input and a long retry storm? Runs the real programs on 127.0.0.1, prints the
 * figures and a PASS/FAIL line per check, and exits 1 if any check failed. Results and the
 * commands are recorded in docs/reliability.md.
 *
 *   1. Hostile input: random and malformed requests against ./server (harness/hostile-http.ts),
 *      each answered as a correct server does (400, 431, … or the right answer).
 *   2. Stalled connections: thousands of connections that never finish their request head;
 *      /stats still answers, and the headers timeout closes them all with 408.
 *   3. Storm: ./server and ./client with thousands of users, the server stopped (SIGSTOP)
 *      and resumed (SIGCONT) by pid several times; no crash, RSS flat after warm-up, every
 *      client window printed once, no socket left over.
 *
 * A short storm for development: npm run soak -- -hostile 2000 -stalled 1000 -storm 2m -outages 2 -outage 10s -warm-up 20s
 * Every process it starts is stopped by its own pid or process group, also on failure or Ctrl-C.
 */
import { readdirSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";
import { formatDuration } from "../src/cli/duration.ts";
import { type FlagSpec, parseFlags, type ProgramDescription } from "../src/cli/flags.ts";
import { describeFailure, UsageError } from "../src/cli/usage-error.ts";
import { DEFAULT_HEADERS_TIMEOUT_MS } from "../src/options/server.ts";
import { SIM_SEED_FLAG } from "../src/config/simulation.ts";
import { ChildProgram } from "../src/runtime/child-program.ts";
import { parseClientLine } from "../src/contracts/client-line.ts";
import { jsonLines } from "../src/contracts/json-line.ts";
import { median } from "../src/model/percentile.ts";
import { secondsText as seconds } from "../src/model/seconds.ts";
import { openStalledConnections, sendHostileRequests } from "../harness/hostile-http.ts";
import { memoryMb } from "./proc-usage.ts";
import { describeSockets, heldSockets, socketsOnPort } from "./socket-count.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");

const SOAK_FLAGS = [
  {
    name: "hostile",
    group: "run",
    kind: "integer",
    default: 10_000,
    min: 0,
    placeholder: "n",
    description: "random and malformed requests (0 = skip)",
  },
  {
    name: "concurrency",
    group: "run",
    kind: "integer",
    default: 200,
    min: 1,
    placeholder: "n",
    description: "hostile requests in flight at once",
  },
  {
    name: "stalled",
    group: "run",
    kind: "integer",
    default: 5_000,
    min: 0,
    placeholder: "n",
    description: "connections that never finish their head (0 = skip)",
  },
  { name: "storm", group: "run", kind: "duration", default: 600_000, minMs: 0, description: "length of the storm (0 = skip)" },
  {
    name: "users",
    group: "run",
    kind: "integer",
    default: 2_000,
    min: 1,
    placeholder: "n",
    description: "the client's -clients in the storm",
  },
  {
    name: "outages",
    group: "run",
    kind: "integer",
    default: 5,
    min: 0,
    placeholder: "n",
    description: "times the server is stopped in the storm",
  },
  {
    name: "outage",
    group: "run",
    kind: "duration",
    default: 20_000,
    minMs: 0,
    minExclusive: true,
    description: "how long each outage lasts",
  },
  { name: "warm-up", group: "run", kind: "duration", default: 60_000, minMs: 0, description: "storm time before the first outage" },
  {
    name: "client-args",
    group: "run",
    kind: "string",
    default: "-exponential-backoff",
    placeholder: "flags",
    description: "more flags for ./client in the storm",
  },
  {
    name: "sample-interval",
    group: "observation",
    kind: "duration",
    default: 5_000,
    minMs: 0,
    minExclusive: true,
    description: "how often RSS and sockets are read",
  },
  { ...SIM_SEED_FLAG, description: "seed of the hostile requests and the client" },
] as const satisfies readonly FlagSpec[];

const SOAK: ProgramDescription<typeof SOAK_FLAGS> = {
  name: "soak",
  summary: "Hostile input, stalled connections and a long retry storm against the real programs; PASS/FAIL per check.",
  flags: SOAK_FLAGS,
};

/** RSS may move this much (relative) after warm-up and still count as flat. */
const RSS_TOLERANCE = 0.1;
/** A client window shorter than this at the end is folded into the summary (src/client/main.ts). */
const MIN_FINAL_WINDOW_MS = 100;

// ---------------------------------------------------------------- processes

const running = new Set<ChildProgram>();

function start(name: string, args: readonly string[]): ChildProgram {
  const program = new ChildProgram(name, resolve(REPO_ROOT, name), args, { cwd: REPO_ROOT });
  running.add(program);
  void program.exited.then(() => running.delete(program));
  return program;
}

function stopAll(): void {
  for (const program of running) program.kill();
}

process.on("SIGINT", () => {
  process.stderr.write("soak: interrupted; stopping the programs it started\n");
  stopAll();
  process.exit(130);
});
process.on("exit", stopAll);

async function startServer(args: readonly string[]): Promise<{ server: ChildProgram; port: number }> {
  const server = start("server", ["-listen", "127.0.0.1:0", ...args]);
  const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 30_000 });
  return { server, port: Number(/:(\d+)\/api/.exec(line)![1]) };
}

const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/** Waits for a condition an event makes true; the limit only bounds a hang. */
async function eventually(condition: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (!(await condition())) {
    if (performance.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** GET over a fresh connection that closes after the answer (no pool to leave sockets behind). */
function rawGet(port: number, path: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolveGet, reject) => {
    const began = performance.now();
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const head = text.slice(0, text.indexOf("\r\n\r\n"));
      const raw = text.slice(head.length + 4);
      resolveGet({ status, body: /^transfer-encoding: chunked$/im.test(head) ? unchunk(raw) : raw, ms: performance.now() - began });
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

/** The body of a chunked answer. */
function unchunk(raw: string): string {
  let body = "";
  for (let at = 0; ;) {
    const lineEnd = raw.indexOf("\r\n", at);
    const size = Number.parseInt(raw.slice(at, lineEnd), 16);
    if (!(size > 0)) return body;
    body += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

const stats = async (port: number) => JSON.parse((await rawGet(port, "/stats")).body) as { concurrency: number };

/** Lines on stderr that mean a program hit something it did not expect. */
const unexpectedLines = (program: ChildProgram) =>
  program.stderr.map((line) => line.text).filter((line) => /unexpected|uncaught|unhandled|^\s+at /.test(line));

/** Descriptors a process holds, or NaN once it is gone. */
const fdCount = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Number.NaN;
    throw error;
  }
};

// ---------------------------------------------------------------- report

interface Check {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}
const checks: Check[] = [];

function check(name: string, pass: boolean, detail: string): void {
  checks.push({ name, pass, detail });
  say(`   ${pass ? "PASS" : "FAIL"}  ${name}: ${detail}`);
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

const fmt = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : String(value));
/** The nearest-rank median of unsorted values; NaN when there are none. */
const medianOrNaN = (values: readonly number[]): number => median(values) ?? Number.NaN;

// ---------------------------------------------------------------- 1 and 2: hostile input, stalled connections

async function hostileAndStalled(count: number, concurrency: number, stalledCount: number, seed: number): Promise<void> {
  const { server, port } = await startServer([]);
  try {
    if (count > 0) {
      say(
        `\n1. hostile input: ${count} random and malformed requests, ${concurrency} at a time, to ./server (pid ${server.pid}, port ${port})`,
      );
      const began = performance.now();
      const report = await sendHostileRequests(port, { count, concurrency, seed });
      const tookMs = performance.now() - began;
      const answers = [...report.answers.entries()].sort((a, b) => b[1] - a[1]);
      say(`   ${report.sent} sent in ${seconds(tookMs)}; answers: ${answers.map(([answer, times]) => `${answer} x${times}`).join(", ")}`);
      for (const [name, outcome] of report.byCase) {
        if (outcome.wrong > 0) say(`   wrong: ${name}: ${outcome.wrong} of ${outcome.sent}: ${outcome.examples.join("; ")}`);
      }
      check(
        "every hostile request answered as a correct server does",
        report.wrong === 0,
        `${report.wrong} wrong of ${report.sent} (${report.byCase.size} kinds)`,
      );
      check(
        "server alive after hostile input",
        server.running && (await rawGet(port, "/stats")).status === 200,
        `pid ${server.pid} running, /stats 200`,
      );
      const drained = await eventually(() => heldSockets(socketsOnPort(port)) === 0, 30_000);
      check("no connection left open after hostile input", drained, describeSockets(socketsOnPort(port)));
    }

    if (stalledCount > 0) {
      const fdsBefore = fdCount(server.pid);
      say(
        `\n2. ${stalledCount} connections that never finish their request head (headers timeout ${formatDuration(DEFAULT_HEADERS_TIMEOUT_MS)})`,
      );
      const began = performance.now();
      const stalled = await openStalledConnections(port, stalledCount);
      say(`   opened in ${seconds(performance.now() - began)}; server descriptors ${fdsBefore} before, ${fdCount(server.pid)} now`);
      const during = await rawGet(port, "/stats");
      check("/stats answers while they are open", during.status === 200, `200 in ${fmt(during.ms, 1)} ms`);
      const closes = await Promise.race([
        Promise.all(stalled.map((connection) => connection.closed)),
        sleep(DEFAULT_HEADERS_TIMEOUT_MS + 60_000).then(() => undefined),
      ]);
      if (closes === undefined) {
        check("the headers timeout closes every stalled connection", false, "not all closed within the timeout + 60 s");
      } else {
        const lifetimes = closes.map((closed, index) => closed.atMs - stalled[index]!.openedAt);
        const with408 = closes.filter((closed) => closed.statuses.length === 1 && closed.statuses[0] === 408).length;
        say(
          `   closed after ${seconds(Math.min(...lifetimes))} (min), ${seconds(medianOrNaN(lifetimes))} (median), ${seconds(Math.max(...lifetimes))} (max); ` +
            `${with408} answered 408`,
        );
        check("the headers timeout closes every stalled connection, with 408", with408 === stalledCount, `${with408} of ${stalledCount}`);
        check(
          "none closed before the headers timeout",
          Math.min(...lifetimes) >= DEFAULT_HEADERS_TIMEOUT_MS,
          `earliest ${seconds(Math.min(...lifetimes))}`,
        );
      }
      const drained = await eventually(() => heldSockets(socketsOnPort(port)) === 0, 30_000);
      check(
        "no connection left open after the stalled ones",
        drained,
        `${describeSockets(socketsOnPort(port))}; server descriptors ${fdCount(server.pid)}`,
      );
      check("server alive after stalled connections", server.running && (await rawGet(port, "/stats")).status === 200, `pid ${server.pid}`);
    }
    const unexpected = unexpectedLines(server);
    check(
      "server printed no unexpected error",
      unexpected.length === 0,
      unexpected.length === 0 ? "none" : unexpected.slice(0, 3).join(" | "),
    );
  } finally {
    await server.stop();
  }
  check("server exits 0 on SIGTERM", (await server.exited) === 0, `exit ${await server.exited}`);
  await eventually(() => heldSockets(socketsOnPort(port)) === 0, 10_000);
  check("no socket left on the port after the server exits", heldSockets(socketsOnPort(port)) === 0, describeSockets(socketsOnPort(port)));
}

// ---------------------------------------------------------------- 3: storm

interface Sample {
  readonly atMs: number;
  readonly phase: string;
  readonly serverRssMb: number;
  readonly clientRssMb: number;
  readonly serverPeakMb: number;
  readonly clientPeakMb: number;
  readonly serverFds: number;
  readonly clientFds: number;
  readonly sockets: Record<string, number>;
}

/** When each outage starts, evenly spaced after the warm-up; a UsageError when they do not fit. */
function outageSchedule(values: { storm: number; outages: number; outage: number; "warm-up": number }): number[] {
  const cycleMs = values.outages === 0 ? 0 : (values.storm - values["warm-up"]) / values.outages;
  if (values.outages > 0 && cycleMs <= values.outage) {
    throw new UsageError(
      `-outages ${values.outages} of ${formatDuration(values.outage)} do not fit in -storm ${formatDuration(values.storm)} after -warm-up ${formatDuration(values["warm-up"])}`,
    );
  }
  return Array.from({ length: values.outages }, (_, index) => values["warm-up"] + index * cycleMs);
}

async function storm(values: {
  storm: number;
  users: number;
  outages: number;
  outage: number;
  "warm-up": number;
  "client-args": string;
  seed: number;
  "sample-interval": number;
}): Promise<void> {
  const outageStarts = outageSchedule(values);
  const clientArgs = values["client-args"].split(/\s+/).filter((arg) => arg !== "");
  say(
    `\n3. storm: ${formatDuration(values.storm)}, ${values.users} users (${["-clients", values.users, ...clientArgs].join(" ")}), ` +
      `${values.outages} outages of ${formatDuration(values.outage)} at ${outageStarts.map((at) => formatDuration(Math.round(at))).join(", ")}`,
  );
  const { server, port } = await startServer(["-json"]);
  const client = start("client", [
    "-url",
    `http://127.0.0.1:${port}/api`,
    "-clients",
    String(values.users),
    "-json",
    "-seed",
    String(values.seed),
    ...clientArgs,
  ]);
  const samples: Sample[] = [];
  const preOutage: Sample[] = [];
  let serverStopped = false;
  try {
    await client.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 });
    say(`   server pid ${server.pid}, client pid ${client.pid}, port ${port}`);
    const began = performance.now();
    const sample = (phase: string): Sample => {
      const serverMemory = memoryMb(server.pid);
      const clientMemory = memoryMb(client.pid);
      const taken = {
        atMs: performance.now() - began,
        phase,
        serverRssMb: serverMemory.rssMb,
        clientRssMb: clientMemory.rssMb,
        serverPeakMb: serverMemory.peakMb,
        clientPeakMb: clientMemory.peakMb,
        serverFds: fdCount(server.pid),
        clientFds: fdCount(client.pid),
        sockets: socketsOnPort(port),
      };
      samples.push(taken);
      return taken;
    };
    let nextSampleMs = 0;
    let lastPrintedMs = -Infinity;
    const events = [
      ...outageStarts.flatMap((at, index) => [
        { atMs: at, what: "stop" as const, index },
        { atMs: at + values.outage, what: "resume" as const, index },
      ]),
      { atMs: values.storm, what: "end" as const, index: -1 },
    ];
    for (const event of events) {
      while (performance.now() - began < event.atMs) {
        for (const program of [server, client])
          if (!program.running) throw new Error(`${program.name} ended during the storm${program.said()}`);
        const now = performance.now() - began;
        if (now >= nextSampleMs) {
          const taken = sample(serverStopped ? "outage" : "running");
          nextSampleMs += values["sample-interval"];
          if (taken.atMs - lastPrintedMs >= 30_000) {
            lastPrintedMs = taken.atMs;
            say(
              `   ${seconds(taken.atMs).padStart(8)} ${taken.phase.padEnd(7)} RSS server ${fmt(taken.serverRssMb, 1)} MB, client ${fmt(taken.clientRssMb, 1)} MB; ` +
                `fds server ${taken.serverFds}, client ${taken.clientFds}; sockets ${describeSockets(taken.sockets)}`,
            );
          }
        }
        await sleep(Math.max(1, Math.min(nextSampleMs, event.atMs) - (performance.now() - began)));
      }
      if (event.what === "stop") {
        preOutage.push(sample(`before outage ${event.index + 1}`));
        server.signal("SIGSTOP");
        serverStopped = true;
      } else if (event.what === "resume") {
        server.signal("SIGCONT");
        serverStopped = false;
      }
    }
    const final = sample("end");
    say(
      `   ${seconds(final.atMs).padStart(8)} end     RSS server ${fmt(final.serverRssMb, 1)} MB, client ${fmt(final.clientRssMb, 1)} MB; sockets ${describeSockets(final.sockets)}`,
    );
    preOutage.push(final);

    client.signal("SIGINT");
    const clientExit = await client.exited;
    check("client exits 0 on SIGINT after the storm", clientExit === 0, `exit ${clientExit}`);
    check("server alive after the storm", server.running, `pid ${server.pid}`);
    const afterClient = await eventually(() => heldSockets(socketsOnPort(port)) === 0, 60_000);
    const inService = (await stats(port)).concurrency;
    check(
      "the server holds no connection once the client is gone",
      afterClient,
      `${describeSockets(socketsOnPort(port))}; still in service (abandoned, no socket): ${inService}`,
    );

    // RSS of a garbage-collected process swings within each outage cycle (the heap grows while
    // retries pile up, and shrinks when the collector catches up), so "flat" compares cycle with
    // cycle: the median of each cycle's samples (from one outage to the next, or the end). The
    // time before the first outage is warm-up, and so is the first outage's cycle when there
    // are three or more (buffers grow to the storm's size once).
    const cycleStarts = [0, ...outageStarts, Infinity];
    const cycles = cycleStarts
      .slice(0, -1)
      .map((from, index) => samples.filter((point) => point.atMs >= from && point.atMs < cycleStarts[index + 1]!));
    const firstCompared = values.outages >= 3 ? 2 : 1;
    const compared = cycles.slice(firstCompared).filter((cycle) => cycle.length > 0);
    for (const [label, key, peakKey] of [
      ["server", "serverRssMb", "serverPeakMb"],
      ["client", "clientRssMb", "clientPeakMb"],
    ] as const) {
      if (compared.length < 2) {
        check(
          `${label} RSS flat within ±${RSS_TOLERANCE * 100} % after warm-up`,
          false,
          "fewer than two outage cycles after warm-up to compare",
        );
        continue;
      }
      const medians = compared.map((cycle) => medianOrNaN(cycle.map((point) => point[key])));
      const deviations = medians.map((median) => median / medians[0]! - 1);
      const worst = deviations.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a), 0);
      const ranges = compared.map(
        (cycle) => `${fmt(Math.min(...cycle.map((point) => point[key])), 0)}-${fmt(Math.max(...cycle.map((point) => point[key])), 0)}`,
      );
      const preOutagePoints = preOutage.slice(firstCompared).map((point) => fmt(point[key], 1));
      check(
        `${label} RSS flat within ±${RSS_TOLERANCE * 100} % after warm-up`,
        Math.abs(worst) <= RSS_TOLERANCE,
        `cycle medians ${medians.map((median) => fmt(median, 1)).join(", ")} MB (worst ${worst >= 0 ? "+" : ""}${fmt(worst * 100, 1)} %); ` +
          `cycle ranges ${ranges.join(", ")} MB; just before each outage and at the end ${preOutagePoints.join(", ")} MB; peak ${fmt(final[peakKey], 1)} MB`,
      );
    }

    // Every client window printed once: they follow one another without gap or overlap, one per
    // interval, and only a final one shorter than 100 ms is folded into the summary.
    const objects = jsonLines(client.stdout.map((line) => line.text)).map(({ text, line }) =>
      parseClientLine(text, { file: "the client's stdout", line }),
    );
    const summary = objects.find((object) => object.kind === "summary");
    const windows = objects.filter((object) => object.kind === "window");
    const full = windows.filter((window) => window.partial !== true);
    const intervalMs = 5_000;
    if (summary === undefined) {
      check("every client window printed once", false, "no summary");
    } else {
      const printedMs = windows.reduce((sum, window) => sum + window.windowMs, 0);
      const foldedMs = summary.windowMs - printedMs;
      const expectedFull = Math.floor(summary.windowMs / intervalMs + 1e-9);
      const sums = (key: "ok" | "errors" | "timedout" | "attempts") => windows.reduce((sum, window) => sum + window[key], 0);
      const countsAddUp = (["ok", "errors", "timedout", "attempts"] as const).every((key) =>
        foldedMs < 1e-6 ? sums(key) === summary[key] : sums(key) <= summary[key],
      );
      check(
        "every client window printed once",
        full.length === expectedFull && foldedMs > -1e-6 && foldedMs < MIN_FINAL_WINDOW_MS && countsAddUp,
        `${full.length} full windows of ${formatDuration(intervalMs)} (expected ${expectedFull}) + ${windows.length - full.length} partial over ${seconds(summary.windowMs)}; ` +
          `unprinted remainder ${fmt(Math.max(0, foldedMs), 3)} ms; window counts add up to the summary: ${countsAddUp}`,
      );
      say(
        `   client totals: attempts ${summary.attempts}, OK ${summary.ok}, errors ${summary.errors}, timedout ${summary.timedout}; ` +
          `server report lines ${server.stdout.filter((line) => line.text.startsWith("{")).length}`,
      );
    }
    for (const program of [server, client]) {
      const unexpected = unexpectedLines(program);
      check(
        `${program.name} printed no unexpected error`,
        unexpected.length === 0,
        unexpected.length === 0 ? "none" : unexpected.slice(0, 3).join(" | "),
      );
    }
  } finally {
    if (serverStopped) server.signal("SIGCONT");
    await client.stop();
    await server.stop();
  }
  check("server exits 0 on SIGTERM after the storm", (await server.exited) === 0, `exit ${await server.exited}`);
  await eventually(() => heldSockets(socketsOnPort(port)) === 0, 10_000);
  const left = socketsOnPort(port);
  check(
    "no socket left over on the port afterwards",
    heldSockets(left) === 0,
    `${describeSockets(left)} (TIME_WAIT is the kernel's, not a process's)`,
  );
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const parsed = parseFlags(SOAK, process.argv.slice(2));
  if (parsed.kind === "help") {
    process.stdout.write(parsed.text);
    return 0;
  }
  const values = parsed.values;
  if (values.storm > 0) outageSchedule(values); // flags checked before anything runs
  const began = performance.now();
  say(
    `soak: ${new Date().toISOString()}, ${process.version}, pid ${process.pid}; flags ${process.argv.slice(2).join(" ") || "(defaults)"}`,
  );
  if (values.hostile > 0 || values.stalled > 0) await hostileAndStalled(values.hostile, values.concurrency, values.stalled, values.seed);
  if (values.storm > 0) await storm(values);
  const failed = checks.filter((entry) => !entry.pass);
  say(`\nsoak: ${checks.length - failed.length} of ${checks.length} checks passed in ${seconds(performance.now() - began)}`);
  for (const entry of failed) say(`FAILED: ${entry.name}: ${entry.detail}`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    stopAll();
    process.exit(code);
  },
  (error: unknown) => {
    stopAll();
    const failure = describeFailure("soak", error, { debug: true });
    process.stderr.write(failure.text);
    process.exit(failure.exitCode);
  },
);

import type { ProgramIo } from "../runtime/program-io.ts";
import { formatListenAddress } from "../cli/listen-address.ts";
import { readFdLimit, readFdUsage } from "../runtime/fd-usage.ts";
import { realClock } from "../clock/real-clock.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { startHttpServer } from "./http-server.ts";
import { startAdminServer } from "./admin-server.ts";
import { selectWorkload } from "../cli/workload.ts";
import { occServerMain } from "./occ-main.ts";
import { describeModel, modelDrawsRandom } from "../model/servers/model-flags.ts";
import { FIGURES_TIMEOUT_MS, parseServerArgs, resolveServerProgramOptions, type ServerOptions, serverModelOf } from "./options.ts";
import { formatServerJson } from "../contracts/server-line-writer.ts";
import { formatServerLine, formatServerTotals } from "./reporter.ts";
import { describeUpstream } from "./upstream.ts";

/** Server-level problems (EMFILE storms) are reported at most this often. */
const PROBLEM_REPORT_INTERVAL_MS = 1_000;

export async function main(argv: readonly string[], io: ProgramIo): Promise<void> {
  const selected = selectWorkload(argv);
  if (selected.workload === "occ") return occServerMain(selected.args, io);
  return requestsMain(selected.args, io);
}

/** The lines a started server prints on stderr: where it listens, what it serves with, and what it draws. */
function announce(
  io: ProgramIo,
  server: Awaited<ReturnType<typeof startHttpServer>>,
  options: ServerOptions,
  spec: ReturnType<typeof serverModelOf>,
  draws: boolean,
): void {
  // Listening on every interface: show an address a local client can use.
  const everywhere = server.address.host === undefined;
  const shown = formatListenAddress(everywhere ? { ...server.address, host: "localhost" } : server.address);
  io.stderr.write(`server: listening on http://${shown}/api (${everywhere ? "all interfaces, " : ""}pid ${process.pid})\n`);
  if (options.metrics) io.stderr.write(`server: metrics on http://${shown}/metrics\n`);
  if (options.errorRate > 0)
    io.stderr.write(`server: answering ${options.errorRate} of requests 500 (-error-rate), seed ${options.seed}\n`);
  const seedNote = draws ? `; service times seed ${options.seed}` : "";
  io.stderr.write(`server: ${describeModel(spec, server.figures, FIGURES_TIMEOUT_MS)}${seedNote}\n`);
  if (options.upstream !== undefined) {
    io.stderr.write(`server: middle tier: each request ${describeUpstream(options.upstream)}; seed ${options.seed}\n`);
  }
}

async function requestsMain(argv: readonly string[], io: ProgramIo): Promise<void> {
  const parsed = parseServerArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const resolved = resolveServerProgramOptions(parsed.values);
  const spec = serverModelOf(resolved);
  const draws = modelDrawsRandom(spec);
  // A middle tier's retry policy may draw (jitter) too.
  const seeded = resolved.errorRate > 0 || draws || resolved.upstream !== undefined;
  const options = seeded ? { ...resolved, seed: resolved.seed ?? randomSeed() } : resolved;
  let lastProblemAt = -Infinity;
  let suppressed = 0;
  const server = await startHttpServer(options, realClock, {
    onProblem: (message) => {
      const now = Date.now();
      if (now - lastProblemAt < PROBLEM_REPORT_INTERVAL_MS) {
        suppressed++;
        return;
      }
      const more = suppressed > 0 ? ` (and ${suppressed} more since the last report)` : "";
      io.stderr.write(`server: ${message}${more}\n`);
      lastProblemAt = now;
      suppressed = 0;
    },
    onOutOfMemory: (event) => {
      io.stderr.write(
        `server: out of memory: ${event.inService} requests in service, the -max-in-service limit; ` +
          "stopping, as a Node server whose heap is full does\n",
      );
      process.exit(1);
    },
  });
  announce(io, server, options, spec, draws);

  const admin = options.adminListen === undefined ? undefined : await startAdminServer(options.adminListen, server);
  if (admin !== undefined) {
    const shownAdmin = formatListenAddress({ ...options.adminListen!, port: admin.port });
    io.stderr.write(
      `server: fault control on http://${shownAdmin}/faults (PUT "capacity*0.5, slow*3, errors*0.2"; an empty body lifts them)\n`,
    );
  }

  const report = () => {
    const snapshot = server.queue.snapshot();
    const now = Date.now();
    const faults = server.activeFaults();
    io.stdout.write(`${options.json ? formatServerJson(now, snapshot, faults) : formatServerLine(now, snapshot, "local", faults)}\n`);
    server.queue.resetPeak();
  };
  const fdWatch = watchFileDescriptors(server.openConnections, (message) => io.stderr.write(`server: ${message}\n`));
  // A repeating Node timer that fires late (after SIGSTOP) fires once and re-arms from now:
  // one line on resume, never a burst of stale ones.
  const reportTimer = setInterval(report, options.reportIntervalMs);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    clearInterval(reportTimer);
    clearInterval(fdWatch);
    report();
    const totals = server.queue.snapshot();
    io.stderr.write(`server: ${signal}: stopped; ${formatServerTotals(totals)}\n`);
    // Thousands of requests may be in service for hours: do not wait for them, and let the
    // kernel close their sockets at exit rather than destroying them one by one first.
    // (Writes to a pipe, file or terminal are synchronous on Linux: the lines above are out.)
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** Descriptors the process holds besides client connections (stdio, epoll, the listener, …), with room to spare. */
const NON_CONNECTION_DESCRIPTORS = 64;

/**
 * Says when the process runs out of descriptors (new connections are being dropped) and
 * when it has recovered: at most one line a second, only on a change. Listing
 * /proc/self/fd costs milliseconds with 10 000 sockets open, so it is only read when the
 * open connections come near the limit.
 */
function watchFileDescriptors(openConnections: () => number, say: (message: string) => void): NodeJS.Timeout | undefined {
  const limit = readFdLimit();
  if (limit === undefined) return undefined;
  let exhausted = false;
  return setInterval(() => {
    if (!exhausted && openConnections() + NON_CONNECTION_DESCRIPTORS < limit) return;
    const usage = readFdUsage(limit);
    if (usage === undefined || usage.exhausted === exhausted) return;
    exhausted = usage.exhausted;
    say(
      exhausted
        ? `out of file descriptors (${usage.open} of ${usage.limit} open): new connections are dropped until some close`
        : `file descriptors available again (${usage.open} of ${usage.limit} open)`,
    );
  }, PROBLEM_REPORT_INTERVAL_MS).unref();
}

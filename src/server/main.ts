import type { ProgramIo } from "../runtime/program-io.ts";
import { formatListenAddress } from "../cli/listen-address.ts";
import cluster from "node:cluster";
import { realClock } from "../clock/real-clock.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { startHttpServer } from "./http-server.ts";
import { startAdminServer } from "./admin-server.ts";
import { selectWorkload } from "../cli/workload.ts";
import { occServerMain } from "./occ-main.ts";
import { describeModel, modelDrawsRandom } from "../model/servers/model-flags.ts";
import { serverModelOf } from "../config/server-system.ts";
import { FIGURES_TIMEOUT_MS, parseServerArgs, resolveServerProgramOptions, type ServerOptions } from "../options/server.ts";
import { formatServerJson } from "../contracts/server-line-writer.ts";
import { formatServerLine, formatServerTotals } from "../contracts/server-text.ts";
import { describeUpstream } from "./upstream.ts";
import { processHooks, watchFileDescriptors } from "./process-hooks.ts";
import { servePrimary, serveWorker } from "./workers.ts";

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
  if ((options.workers ?? 1) > 1) return cluster.isPrimary ? servePrimary(options, spec, draws, io) : serveWorker(options, io);
  const server = await startHttpServer(options, realClock, processHooks(io));
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

import cluster, { type Worker } from "node:cluster";
import { formatListenAddress } from "../cli/listen-address.ts";
import { realClock } from "../clock/real-clock.ts";
import { formatServerJson } from "../contracts/server-line-writer.ts";
import { describeModel } from "../model/servers/model-flags.ts";
import { modelOf, type ServerModelSpec } from "../model/servers/models.ts";
import type { ServiceSnapshot } from "../model/servers/server-model.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { startHttpServer } from "./http-server.ts";
import { FIGURES_TIMEOUT_MS, type ServerOptions, serverFigures } from "../options/server.ts";
import { processHooks, watchFileDescriptors } from "./process-hooks.ts";
import { aggregateMetrics } from "./metrics.ts";
import { formatServerLine, formatServerTotals } from "../contracts/server-text.ts";

/*
 * ./server -workers N: one server over N processes (node:cluster shares the listening socket
 * between them), with one model state. Each process serves its own connections and keeps its
 * own requests in service; the primary adds up how many each holds and tells every process how
 * many the others hold, so that every request's delay is the curve's at the whole server's
 * concurrency (ServiceQueue.shareConcurrency). The counts travel every SYNC_INTERVAL_MS: a
 * process sees the others' requests at most about two intervals late. The primary prints the
 * report lines, for the whole server.
 */

/** How often a process sends its count when it changed, and the primary the others' counts when they changed. */
export const SYNC_INTERVAL_MS = 2;
/** How long the primary waits for the processes' snapshots before it prints a line with the ones it has. */
const SNAPSHOT_WAIT_MS = 250;

type ToPrimary =
  | { readonly kind: "listening"; readonly port: number }
  | { readonly kind: "in-service"; readonly count: number }
  | { readonly kind: "snapshot"; readonly id: number; readonly snapshot: ServiceSnapshot }
  /** GET /stats reached this process: it asks for the whole server's snapshot (`request`: its own number for the answer). */
  | { readonly kind: "whole"; readonly request: number }
  /** GET /metrics reached this process: it asks for the whole server's series. */
  | { readonly kind: "metrics"; readonly request: number }
  /** A process's series (prom-client's getMetricsAsJSON), for the primary to add up. */
  | { readonly kind: "series"; readonly id: number; readonly series: SeriesJson };

type ToWorker =
  | { readonly kind: "others"; readonly count: number }
  /** The report's snapshots reset each process's peak; GET /stats's do not. */
  | { readonly kind: "snapshot"; readonly id: number; readonly resetPeak: boolean }
  | { readonly kind: "whole"; readonly request: number; readonly snapshot: ServiceSnapshot }
  | { readonly kind: "series"; readonly id: number }
  | { readonly kind: "metrics"; readonly request: number; readonly text: string };

type SeriesJson = Parameters<typeof aggregateMetrics>[0][number];

/** A server process of the primary's: what it last said. */
interface Process {
  readonly worker: Worker;
  inService: number;
  othersSent: number;
  /** Its last snapshot, and the request it answered. */
  snapshot: ServiceSnapshot | undefined;
  answeredId: number;
  /** Its series for the request `seriesId` (GET /metrics). */
  series: SeriesJson | undefined;
  seriesId: number;
}

/** The environment a process is started with: its number and the server's seed, so that each draws from a stream of its own. */
const PROCESS_ENV = "THUNDERING_HERD_SERVER_PROCESS";
const SEED_ENV = "THUNDERING_HERD_SERVER_SEED";

/** The whole server's snapshot from the processes' own: counters added up, the delays the curve's at the whole concurrency. */
export function wholeServer(
  snapshots: readonly ServiceSnapshot[],
  peakConcurrency: number,
  delayMs: (concurrency: number) => number,
): ServiceSnapshot {
  const sum = (figure: (snapshot: ServiceSnapshot) => number) => snapshots.reduce((total, snapshot) => total + figure(snapshot), 0);
  const concurrency = sum((snapshot) => snapshot.concurrency);
  // The totals the counts carried miss a peak between two exchanges; no process's own peak can exceed the whole's.
  const peak = Math.max(peakConcurrency, concurrency, ...snapshots.map((snapshot) => snapshot.peakConcurrency));
  return {
    concurrency,
    lastDelayMs: delayMs(concurrency),
    peakConcurrency: peak,
    peakDelayMs: delayMs(peak),
    admitted: sum((snapshot) => snapshot.admitted),
    served: sum((snapshot) => snapshot.served),
    abandoned: sum((snapshot) => snapshot.abandoned),
    abandonedInService: sum((snapshot) => snapshot.abandonedInService),
    cancelled: sum((snapshot) => snapshot.cancelled),
    shed: sum((snapshot) => snapshot.shed),
    expired: sum((snapshot) => snapshot.expired),
    errorsInjected: sum((snapshot) => snapshot.errorsInjected),
  };
}

/** The primary's side: the processes it started, their counts kept in step, and the whole server's snapshots. */
class ServerProcesses {
  readonly processes: Process[] = [];
  private readonly delayMs: (concurrency: number) => number;
  private peakSinceReport = 0;
  private changed = false;
  private snapshotId = 0;
  private readonly answered = new Set<() => void>();
  private readonly sync: NodeJS.Timeout;
  stopping = false;

  /** Told when a process that was serving ends while the server is not stopping. */
  private readonly onEnded: (index: number, worker: Worker, code: number | null, signal: string | null) => void;

  constructor(spec: ServerModelSpec, onEnded: ServerProcesses["onEnded"]) {
    this.onEnded = onEnded;
    this.delayMs = modelOf(spec).sharedDelay!(spec).delayMs;
    this.sync = setInterval(() => this.sendCounts(), SYNC_INTERVAL_MS);
  }

  /** Starts process `index` with the server's seed; resolves with its port once it listens, or undefined if it ends first. */
  start(index: number, seed: number | undefined): Promise<number | undefined> {
    const worker = cluster.fork({ [PROCESS_ENV]: String(index), ...(seed === undefined ? {} : { [SEED_ENV]: String(seed) }) });
    const served: Process = { worker, inService: 0, othersSent: 0, snapshot: undefined, answeredId: 0, series: undefined, seriesId: 0 };
    this.processes.push(served);
    let listened = false;
    return new Promise((resolve) => {
      worker.on("message", (message: ToPrimary) => {
        if (message.kind === "listening") {
          listened = true;
          resolve(message.port);
        } else if (message.kind === "in-service") {
          served.inService = message.count;
          this.changed = true;
        } else if (message.kind === "whole") {
          void this.gather(false).then((snapshot) => send(worker, { kind: "whole", request: message.request, snapshot }));
        } else if (message.kind === "metrics") {
          void this.gatherSeries().then((text) => send(worker, { kind: "metrics", request: message.request, text }));
        } else if (message.kind === "series") {
          served.series = message.series;
          served.seriesId = message.id;
          for (const check of this.answered) check();
        } else {
          served.snapshot = message.snapshot;
          served.answeredId = message.id;
          for (const check of this.answered) check();
        }
      });
      // Before it listens the start fails (the process said why); after, the server ends with it, even while others start.
      worker.once("exit", (code, signal) => {
        resolve(undefined);
        if (listened && !this.stopping) this.onEnded(index, worker, code, signal);
      });
    });
  }

  /** Tells each process the others' requests in service, when they changed. */
  private sendCounts(): void {
    if (!this.changed) return;
    this.changed = false;
    const total = this.processes.reduce((sum, each) => sum + each.inService, 0);
    if (total > this.peakSinceReport) this.peakSinceReport = total;
    for (const each of this.processes) {
      const others = total - each.inService;
      if (others === each.othersSent) continue;
      each.othersSent = others;
      send(each.worker, { kind: "others", count: others });
    }
  }

  /**
   * Sends `message` to every process and waits until each has answered it (`answeredId` reaches the
   * message's id) or SNAPSHOT_WAIT_MS has passed: a process that does not answer (stopped, busy) is not waited for.
   */
  private async askEveryProcess(message: Extract<ToWorker, { id: number }>, answeredId: (each: Process) => number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let check: () => void = () => {};
    await new Promise<void>((resolve) => {
      check = () => this.processes.every((each) => answeredId(each) >= message.id) && resolve();
      this.answered.add(check);
      timer = setTimeout(resolve, SNAPSHOT_WAIT_MS);
      for (const each of this.processes) send(each.worker, message);
    });
    clearTimeout(timer);
    this.answered.delete(check);
  }

  /** Every process's snapshot added up: one that does not answer counts with its last. */
  async gather(resetPeak = true): Promise<ServiceSnapshot> {
    await this.askEveryProcess({ kind: "snapshot", id: ++this.snapshotId, resetPeak }, (each) => each.answeredId);
    const snapshots = this.processes.flatMap((each) => (each.snapshot === undefined ? [] : [each.snapshot]));
    const whole = wholeServer(snapshots, this.peakSinceReport, this.delayMs);
    if (resetPeak) this.peakSinceReport = whole.concurrency;
    return whole;
  }

  /** Every process's series added up (GET /metrics): one that does not answer is left out. */
  async gatherSeries(): Promise<string> {
    const id = ++this.snapshotId;
    await this.askEveryProcess({ kind: "series", id }, (each) => each.seriesId);
    return aggregateMetrics(this.processes.flatMap((each) => (each.seriesId === id && each.series !== undefined ? [each.series] : [])));
  }

  /** Ends every process (the kernel closes their connections). */
  kill(): void {
    this.stopping = true;
    clearInterval(this.sync);
    for (const { worker } of this.processes) worker.process.kill("SIGKILL");
  }
}

const send = (worker: Worker, message: ToWorker) => {
  if (worker.isConnected()) worker.send(message);
};

/** The primary: starts the processes, keeps their counts in step, and prints the whole server's lines. */
export async function servePrimary(options: ServerOptions, spec: ServerModelSpec, draws: boolean, io: ProgramIo): Promise<void> {
  const count = options.workers!;
  const server = new ServerProcesses(spec, (index, worker, code, signal) => {
    io.stderr.write(
      `server: process ${index + 1} of ${count} (pid ${worker.process.pid}) ended (${signal ?? `exit code ${code}`}); stopping the others\n`,
    );
    server.kill();
    process.exit(1);
  });
  // The first alone, then the others: a port that cannot be had is said once, by the first.
  // (A process that could not serve said why; the server ends with it.)
  const started = async (ports: Promise<number | undefined>[]): Promise<number> => {
    const all = await Promise.all(ports);
    if (all.every((each) => each !== undefined)) return all[0]!;
    server.kill();
    return process.exit(1);
  };
  const port = await started([server.start(0, options.seed)]);
  await started(Array.from({ length: count - 1 }, (_, index) => server.start(index + 1, options.seed)));
  const print = (snapshot: ServiceSnapshot) =>
    io.stdout.write(
      `${options.json ? formatServerJson(Date.now(), snapshot, undefined) : formatServerLine(Date.now(), snapshot, "local", undefined)}\n`,
    );
  announceProcesses(io, options, spec, draws, port, server.processes);

  let reporting = false;
  // A repeating timer that fires late (after SIGSTOP) fires once and re-arms from now, as in one process.
  const reportTimer = setInterval(() => {
    if (reporting || server.stopping) return;
    reporting = true;
    void server
      .gather()
      .then((snapshot) => !server.stopping && print(snapshot))
      .finally(() => (reporting = false));
  }, options.reportIntervalMs);
  const stop = (signal: NodeJS.Signals) => {
    if (server.stopping) return;
    // From here a process that ends (a signal to the whole group) is part of the stop, not news.
    server.stopping = true;
    clearInterval(reportTimer);
    void server.gather().then((totals) => {
      print(totals);
      io.stderr.write(`server: ${signal}: stopped; ${formatServerTotals(totals)}\n`);
      server.kill();
      process.exit(0);
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** The primary's first lines: where the server listens and with which processes, its model, and how the processes share it. */
function announceProcesses(
  io: ProgramIo,
  options: ServerOptions,
  spec: ServerModelSpec,
  draws: boolean,
  port: number,
  processes: readonly Process[],
): void {
  const everywhere = options.listen.host === undefined;
  const shown = formatListenAddress({ host: everywhere ? "localhost" : options.listen.host, port });
  const pids = processes.map((each) => each.worker.process.pid).join(", ");
  io.stderr.write(
    `server: listening on http://${shown}/api (${everywhere ? "all interfaces, " : ""}pid ${process.pid}, ${processes.length} processes: ${pids})\n`,
  );
  if (options.metrics) io.stderr.write(`server: metrics on http://${shown}/metrics (the whole server's, whichever process answers)\n`);
  const seeds = `seed ${options.seed} (the processes listed draw with ${options.seed}, ${options.seed} + 1, …)`;
  if (options.errorRate > 0) io.stderr.write(`server: answering ${options.errorRate} of requests 500 (-error-rate), ${seeds}\n`);
  const seedNote = draws ? `; service times ${seeds}` : "";
  io.stderr.write(`server: ${describeModel(spec, serverFigures(options), FIGURES_TIMEOUT_MS)}${seedNote}\n`);
  io.stderr.write(
    `server: one model state over ${processes.length} processes: each sees the others' requests in service within about ` +
      `${2 * SYNC_INTERVAL_MS} ms\n`,
  );
}

/** One of the processes: serves, sends its count when it changes, takes the others', and answers the primary's requests for a snapshot. */
export async function serveWorker(options: ServerOptions, io: ProgramIo): Promise<void> {
  const index = Number(process.env[PROCESS_ENV] ?? 0);
  const seed = process.env[SEED_ENV];
  // Process k draws with the server's seed + k: every process a stream of its own, the run reproducible from the one seed.
  const own = seed === undefined ? options : { ...options, seed: Number(seed) + index };
  const send = (message: ToPrimary) => {
    if (process.connected) process.send!(message);
  };
  // GET /stats and GET /metrics answer for the whole server, as the first process's lines do: asked for over the channel.
  const pending = new Map<number, (answer: unknown) => void>();
  let requests = 0;
  const askPrimary = <Answer>(kind: "whole" | "metrics") =>
    new Promise<Answer>((resolve) => {
      const request = ++requests;
      pending.set(request, resolve as (answer: unknown) => void);
      send({ kind, request });
    });
  const wholeServerStats = () => askPrimary<ServiceSnapshot>("whole");
  const wholeServerMetrics = () => askPrimary<string>("metrics");
  const server = await startHttpServer(own, realClock, { ...processHooks(io), stats: wholeServerStats, metricsText: wholeServerMetrics });
  const queue = server.queue;
  process.on("message", (message: ToWorker) => {
    if (message.kind === "others") queue.shareConcurrency!(message.count);
    else if (message.kind === "whole" || message.kind === "metrics") {
      pending.get(message.request)?.(message.kind === "whole" ? message.snapshot : message.text);
      pending.delete(message.request);
    } else if (message.kind === "series") {
      void server.metrics?.registry.getMetricsAsJSON().then((series) => send({ kind: "series", id: message.id, series }));
    } else {
      send({ kind: "snapshot", id: message.id, snapshot: queue.snapshot() });
      if (message.resetPeak) queue.resetPeak();
    }
  });
  let sent = 0;
  setInterval(() => {
    if (queue.concurrency === sent) return;
    sent = queue.concurrency;
    send({ kind: "in-service", count: sent });
  }, SYNC_INTERVAL_MS);
  watchFileDescriptors(server.openConnections, (message) => io.stderr.write(`server: ${message}\n`));
  // The primary ends the processes: a Ctrl-C in a terminal, or a SIGTERM to the group, reaches them too, and the primary answers it.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  process.on("disconnect", () => process.exit(0));
  send({ kind: "listening", port: server.address.port });
}

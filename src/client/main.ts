import { selectWorkload } from "../cli/workload.ts";
import { occClientMain } from "./occ-main.ts";
import { formatDuration } from "../cli/duration.ts";
import { formatListenAddress } from "../cli/listen-address.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { Clock, Timer } from "../clock/clock.ts";
import { realClock } from "../clock/real-clock.ts";
import { addCounts, addSummarized, mergeWindowReports } from "../model/window-merge.ts";
import { behindReason, worstDelay } from "../model/client-behind.ts";
import type { LatencySummary } from "../model/latency-histogram.ts";
import { behindWarning } from "../options/client-workers.ts";
import type { WindowReport } from "../model/window-stats.ts";
import { serveMetrics } from "../runtime/metrics-endpoint.ts";
import { readFdLimit } from "../runtime/fd-usage.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { type HerdShare, localShare, type ShareFinal, type ShareWindow } from "./herd-share.ts";
import { workerShare } from "./herd-worker.ts";
import { type ClientMetrics, clientMetrics } from "./metrics.ts";
import { type ClientFlagValues, type ClientOptions, describeLoad, parseClientArgs, resolveClientOptions } from "../options/client.ts";
import { describeStrategy } from "../config/load.ts";
import { formatClientLine, formatClientSummary, openLoopSuffix } from "../contracts/client-text.ts";
import { clientNotStartedLine, clientSummaryLine, clientWindowLine } from "../contracts/client-line-writer.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import { partOf, type UserRange } from "./shard.ts";
import { redactUrl } from "../cli/redact-url.ts";

/** How long the end of a run waits for a worker thread's last window before it goes on without it. */
const FINISH_WAIT_MS = 700;
/**
 * How long a window waits for a worker thread's counts (at least one interval): a thread whose
 * loop is swamped answers late, and silence for as long is no way to say that the client fell
 * behind. The window is printed without them, marked; they join the next window, marked too.
 */
const WINDOW_WAIT_MS = 1_000;
/** A worker thread's answer that missed its window's wait. */
const LATE = "late";

/** How long the end of a run waits for the connections to close before it exits with them open. */
const CLOSE_WAIT_MS = 300;

/** A final window shorter than this is folded into the summary instead of printed. */
const MIN_FINAL_WINDOW_MS = 100;

/**
 * The window the shares reported, as one: counts added, histograms added, open-loop figures
 * added. A share that did not answer by the end of the run (undefined) is counted as missing.
 */
function mergeShares(
  answers: readonly (ShareWindow | undefined)[],
  startMs: number,
  endMs: number,
): {
  report: WindowReport;
  inFlight: number;
  openLoop: OpenLoopTotals | undefined;
  eventLoopDelay: LatencySummary | undefined;
  missing: number;
} {
  const windows = answers.filter((window) => window !== undefined);
  const latency = addSummarized(windows.map((window) => ({ histogram: window.histogram, maxMs: window.maxLatencyMs })));
  const lateness = addSummarized(windows.map((window) => ({ histogram: window.latenessHistogram, maxMs: window.maxLatenessMs })));
  return {
    report: {
      startMs,
      endMs,
      counts: addCounts(windows.map((window) => window.counts)),
      latency: latency.summary,
      histogram: latency.histogram,
      lateness: lateness.summary,
      latenessHistogram: lateness.histogram,
    },
    inFlight: windows.reduce((sum, window) => sum + window.inFlight, 0),
    eventLoopDelay: worstDelay(windows.map((window) => window.eventLoopDelay)),
    missing: answers.length - windows.length,
    openLoop: windows.some((window) => window.openLoop !== undefined)
      ? {
          aliveChains: windows.reduce((sum, window) => sum + (window.openLoop?.aliveChains ?? 0), 0),
          droppedArrivals: windows.reduce((sum, window) => sum + (window.openLoop?.droppedArrivals ?? 0), 0),
        }
      : undefined,
  };
}

function describeShare(options: ClientOptions, range: UserRange, threads: number): string {
  const parts: string[] = [];
  if (options.shard.count > 1) {
    parts.push(`shard ${options.shard.index}/${options.shard.count}: users ${range.firstUser}-${range.firstUser + range.users - 1}`);
  }
  if (threads > 1) parts.push(`${threads} worker threads`);
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

/**
 * This process's shares: one in this thread (with the metrics' observer, when -metrics-listen),
 * or one per worker thread.
 */
async function startShares(
  values: ClientFlagValues,
  options: ClientOptions,
  range: UserRange,
  seed: number,
  threads: number,
  metrics: ClientMetrics | undefined,
) {
  // The herd runs in worker threads, so that this thread keeps the time: a herd that
  // overloads its own loop cannot delay the end of the run. -metrics-listen reads the
  // counters of a herd in this thread.
  if (metrics !== undefined) {
    const share = localShare(options, range, seed, (stats) => metrics?.observer(stats) ?? stats);
    return { shares: [share], local: share };
  }
  const shares = await Promise.allSettled(
    Array.from({ length: threads }, (_, index) =>
      workerShare({ values, range: partOf(range, index, threads), seed }, `worker thread ${index + 1}`),
    ),
  );
  const failed = shares.find((share) => share.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(shares.map((share) => (share.status === "fulfilled" ? share.value.close() : undefined)));
    throw failed.reason;
  }
  return { shares: shares.map((share) => (share as PromiseFulfilledResult<HerdShare>).value), local: undefined };
}

export async function main(argv: readonly string[], io: ProgramIo): Promise<number | void> {
  const selected = selectWorkload(argv);
  if (selected.workload === "occ") return occClientMain(selected.args, io);
  return requestsMain(selected.args, io);
}

async function requestsMain(argv: readonly string[], io: ProgramIo): Promise<void> {
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const options = resolveClientOptions(parsed.values);
  const seed = options.seed ?? randomSeed();
  // Read now, while descriptors are free: the warning that names it is written when they have run out.
  const fdLimit = readFdLimit();
  const range = partOf({ firstUser: 0, users: options.clients }, options.shard.index, options.shard.count);
  const threads = Math.max(1, Math.min(options.workers, range.users));
  const shardLabel = options.shard.count > 1 ? `${options.shard.index}/${options.shard.count}` : undefined;
  io.stderr.write(`${startLine(options, describeShare(options, range, threads), seed)}\n`);

  const clock = realClock;
  const signals = listenForStopSignals();
  // The metrics read the local share's load, which is made with their observer: filled in below.
  const made: MadeShare = {};
  const metrics = await listenForMetrics(options, range, made, io);
  const { shares, local } = await startShares(parsed.values, options, range, seed, threads, metrics);
  made.share = local;
  // A failure to close is a bug: it surfaces (one line, exit 1) instead of a quiet exit 0.
  const exitAfterClose = async () => {
    await Promise.all(shares.map((share) => share.close()));
    process.exit(0);
  };

  // -start-at: wait for the instant, then anchor the window grid there.
  const waitMs = msUntilStartAt(options);
  if (waitMs > 0) {
    const stoppedBy = await waitForStartAt(options, waitMs, signals.requested, io);
    if (stoppedBy !== undefined) {
      io.stdout.write(
        options.json ? `${JSON.stringify(clientNotStartedLine(stoppedBy))}\n` : `summary: stopped by ${stoppedBy} before the start\n`,
      );
      await exitAfterClose();
      return;
    }
  }
  const grid = windowGrid(options, waitMs, clock);
  for (const share of shares) share.start(grid.stopAtEpochMs);
  const load = { users: range.users, threads, fdLimit };
  runWindows({ io, options, shares, clock, grid, shardLabel, load, signals, exitAfterClose });
}

/** A stop asked by a signal, and whether the run is stopping already. */
interface StopSignals {
  /** The name of the first signal. */
  readonly requested: Promise<string>;
  stopping: boolean;
}

/** SIGINT and SIGTERM ask the run to stop; a second signal while stopping ends the process at once, as Ctrl-C twice does elsewhere. */
function listenForStopSignals(): StopSignals {
  let stopRequest: ((reason: string) => void) | undefined;
  const signals: StopSignals = { requested: new Promise<string>((resolve) => (stopRequest = resolve)), stopping: false };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signals.stopping) process.exit(signal === "SIGINT" ? 130 : 143);
    stopRequest?.(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return signals;
}

/** The share in this thread, once made (-metrics-listen's counters read its load). */
interface MadeShare {
  share?: ReturnType<typeof localShare> | undefined;
}

/**
 * -metrics-listen: the client's series, listening before the load starts, so that a port in use
 * ends the program before any request. They read the load of `made`'s share, made later with
 * their observer; -metrics-listen runs in one thread only (a usage error with -workers above 1).
 */
async function listenForMetrics(
  options: ClientOptions,
  range: UserRange,
  made: MadeShare,
  io: ProgramIo,
): Promise<ClientMetrics | undefined> {
  if (options.metricsListen === undefined) return undefined;
  const metrics = clientMetrics({
    users: options.arrivals.kind === "open" ? undefined : range.users,
    budget: options.retry.fleet?.budget?.kind === "grpc" ? options.retry.fleet.budget.budget : undefined,
    inFlight: () => made.share?.load.inFlight ?? 0,
    instances: () => made.share?.load.instances,
  });
  const endpoint = await serveMetrics(options.metricsListen, metrics.registry);
  io.stderr.write(`client: metrics on http://${formatListenAddress(endpoint.address)}/metrics\n`);
  return metrics;
}

/** -start-at: how long until the instant (0 or less: none, or passed). */
function msUntilStartAt(options: ClientOptions): number {
  return options.startAtEpochMs === undefined ? 0 : options.startAtEpochMs - Date.now();
}

/** Waits `waitMs` for -start-at's instant; a signal before it ends the wait, its name returned. */
async function waitForStartAt(
  options: ClientOptions,
  waitMs: number,
  earlyStop: Promise<string>,
  io: ProgramIo,
): Promise<string | undefined> {
  io.stderr.write(`client: starting at ${new Date(options.startAtEpochMs!).toISOString()}, in ${formatDuration(Math.round(waitMs))}\n`);
  let wake: NodeJS.Timeout | undefined;
  const reason = await Promise.race([
    earlyStop,
    new Promise<undefined>((resolve) => (wake = setTimeout(() => resolve(undefined), waitMs))),
  ]);
  clearTimeout(wake);
  return reason;
}

/**
 * The window grid: points every interval from the anchor (-start-at, or now). Grid arithmetic
 * is done in ms since the anchor, where the points and a -duration that waited for -start-at
 * are exact integers, so every shard labels its windows alike.
 */
interface WindowGrid {
  /** When the run started, on the clock. */
  readonly runStartMs: number;
  readonly anchorEpochMs: number;
  /** The anchor on the clock. */
  readonly anchorMs: number;
  readonly interval: number;
  /** When the run stops, in ms since the anchor (Infinity without -duration). */
  readonly stopOffsetMs: number;
  readonly stopAtEpochMs: number | undefined;
}

/** The grid of a run starting now, after waiting `waitMs` for -start-at (0: no wait). */
function windowGrid(options: ClientOptions, waitMs: number, clock: Clock): WindowGrid {
  const runStartMs = clock.now();
  const runStartEpochMs = Date.now();
  const anchorEpochMs = options.startAtEpochMs ?? runStartEpochMs;
  const anchorMs = runStartMs - (runStartEpochMs - anchorEpochMs);
  // A run that waited for -start-at began at that instant; its -duration counts from there.
  const startOffsetMs = waitMs > 0 || options.startAtEpochMs === undefined ? 0 : runStartMs - anchorMs;
  const stopOffsetMs = options.durationMs > 0 ? startOffsetMs + options.durationMs : Infinity;
  const stopAtEpochMs = Number.isFinite(stopOffsetMs) ? anchorEpochMs + stopOffsetMs : undefined;
  return { runStartMs, anchorEpochMs, anchorMs, interval: options.intervalMs, stopOffsetMs, stopAtEpochMs };
}

/** The epoch instant of a grid point. */
function gridEpoch(grid: WindowGrid, slot: number): number {
  return grid.anchorEpochMs + slot * grid.interval;
}

/** What a run's windows and its summary share. */
interface ClientRun {
  readonly io: ProgramIo;
  readonly options: ClientOptions;
  readonly shares: readonly HerdShare[];
  readonly clock: Clock;
  readonly grid: WindowGrid;
  readonly shardLabel: string | undefined;
  /** This process's load, for the warning when the client falls behind. */
  readonly load: { readonly users: number; readonly threads: number; readonly fdLimit: number | undefined };
  readonly signals: StopSignals;
  /** Closes the shares' connections and exits. */
  readonly exitAfterClose: () => Promise<void>;
}

/**
 * Closes a window at each grid point until -duration or a signal, then the last one and the
 * summary. The end of the run waits FINISH_WAIT_MS at most for the shares' last answers: a
 * thread whose loop is blocked must not hold the end.
 */
function runWindows(run: ClientRun): void {
  const { clock, grid, shares } = run;
  let giveUpWaiting: (value: undefined) => void = () => {};
  const gaveUpWaiting = new Promise<undefined>((resolve) => (giveUpWaiting = resolve));
  const answer = <T>(promise: Promise<T>): Promise<T | undefined> => Promise.race([promise, gaveUpWaiting]);
  const printer = windowPrinter(run);
  const windowWaitMs = windowWait(grid);

  let windowTimer: Timer | undefined;
  const armNext = (now: number) => {
    const slot = Math.max(1, Math.floor((now - grid.anchorMs) / grid.interval) + 1);
    windowTimer =
      grid.stopOffsetMs <= slot * grid.interval
        ? clock.schedule(grid.anchorMs + grid.stopOffsetMs - now, () => void stop("duration"))
        : clock.schedule(grid.anchorMs + slot * grid.interval - now, function closeWindow() {
            const closedAt = clock.now();
            // Never early, so the grid point just passed is the window's slot (a late wake
            // after a stopped process ends at the last one passed).
            const closedSlot = Math.max(slot, Math.floor((closedAt - grid.anchorMs) / grid.interval));
            const replies = shares.map((share) => answer(share.closeWindow()));
            printer.emit(closedAt, gridEpoch(grid, closedSlot), false, printer.withinWait(replies, windowWaitMs));
            armNext(closedAt);
          });
  };
  armNext(grid.runStartMs);

  const stop = async (reason: string) => {
    if (run.signals.stopping) return;
    run.signals.stopping = true;
    if (windowTimer !== undefined) clock.cancel(windowTimer);
    const now = clock.now();
    setTimeout(() => giveUpWaiting(undefined), FINISH_WAIT_MS).unref();
    const finals = Promise.all(shares.map((share) => answer(share.finish())));
    // A run stopped by -duration ends at its nominal instant: on a grid point it closes a
    // whole window; elsewhere, and on a signal, a partial one in the slot it ends in.
    const endOffsetMs = reason === "duration" ? grid.stopOffsetMs : now - grid.anchorMs;
    printer.emit(
      now,
      gridEpoch(grid, Math.ceil(endOffsetMs / grid.interval)),
      reason !== "duration" || endOffsetMs % grid.interval !== 0,
      finals.then((all) => all.map((final) => final?.window)),
    );
    const answered = await finals;
    await printer.printed();
    run.io.stdout.write(summaryText(run, printer, answered, reason, now));
    // The summary is out: the run is over. Closing the connections of a large herd can take
    // longer than the run's end may wait; what is left is closed by the exit.
    await Promise.race([run.exitAfterClose(), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS))]);
    process.exit(0);
  };
  void run.signals.requested.then((reason) => stop(reason));
}

/** How long a window waits for the shares' counts: WINDOW_WAIT_MS, or an interval if longer. */
function windowWait(grid: WindowGrid): number {
  return Math.max(grid.interval, WINDOW_WAIT_MS);
}

/** The summary line: every share's totals; without them (a share that did not answer), the windows printed. */
function summaryText(
  run: ClientRun,
  printer: WindowPrinter,
  answered: readonly (ShareFinal | undefined)[],
  reason: string,
  now: number,
): string {
  const runStartMs = run.grid.runStartMs;
  const { report: totals, openLoop } = answered.every((final) => final !== undefined)
    ? mergeShares(
        answered.map((final) => final!.totals),
        runStartMs,
        now,
      )
    : { report: mergeWindowReports(printer.reports, { startMs: runStartMs, endMs: now }), openLoop: undefined };
  const behindWindows = printer.behindWindows();
  return run.options.json
    ? `${JSON.stringify(clientSummaryLine(totals, reason, Date.now(), run.shardLabel, behindWindows, openLoop))}\n`
    : `${formatClientSummary(totals, behindWindows)}${openLoop === undefined ? "" : openLoopSuffix(openLoop)}\n`;
}

/** What a window's shares answered: a window, LATE (kept for the next window), or undefined (no answer by the end of the run). */
type WindowAnswers = Promise<(ShareWindow | typeof LATE | undefined)[]>;

/** Prints the windows in order, each once its answers are in; counts that came late join the next window. */
interface WindowPrinter {
  /** Queues the window that ends at `endMs`, on the grid point `gridEpochMs`; `partial` for a last window shorter than an interval. */
  emit(endMs: number, gridEpochMs: number, partial: boolean, collect: WindowAnswers): void;
  /** A window's answers, each waited for `waitMs` at most; a late one is kept for the next window. */
  withinWait(replies: readonly Promise<ShareWindow | undefined>[], waitMs: number): WindowAnswers;
  /** Once every window queued so far is printed. */
  printed(): Promise<void>;
  /** Every window's merged report, printed or not, for a summary without a share's totals. */
  readonly reports: readonly WindowReport[];
  /** How many windows printed were marked behind. */
  behindWindows(): number;
}

function windowPrinter(run: ClientRun): WindowPrinter {
  const { io, shares } = run;
  /** Per share, counts that came after their window had been printed, for the next window. */
  const lateAnswers: ShareWindow[][] = shares.map(() => []);
  const reports: WindowReport[] = [];
  let printing = Promise.resolve();
  let windowStartMs = run.grid.runStartMs;
  let behindWindows = 0;
  const withinWait = (replies: readonly Promise<ShareWindow | undefined>[], waitMs: number) => {
    let expire: () => void = () => {};
    const expired = new Promise<typeof LATE>((resolve) => (expire = () => resolve(LATE)));
    const timer = setTimeout(expire, waitMs);
    timer.unref();
    return Promise.all(
      replies.map(async (reply, index) => {
        const first = await Promise.race([reply, expired]);
        if (first !== LATE) return first;
        void reply.then((window) => window !== undefined && lateAnswers[index]!.push(window));
        return LATE;
      }),
    ).finally(() => clearTimeout(timer));
  };
  const emit = (endMs: number, gridEpochMs: number, partial: boolean, collect: WindowAnswers) => {
    const startMs = windowStartMs;
    windowStartMs = endMs;
    printing = printing.then(async () => {
      const answers = await collect;
      const late = answers.filter((answer) => answer === LATE).length;
      // Earlier windows' counts that came late: counted here, their in-flight figures stale.
      const carried = lateAnswers.flatMap((list) => list.splice(0)).map((window) => ({ ...window, inFlight: 0, openLoop: undefined }));
      const current = answers.map((answer) => (answer === LATE ? undefined : answer));
      const merged = mergeShares([...current, ...carried], startMs, endMs);
      const { report, inFlight, openLoop, eventLoopDelay } = merged;
      reports.push(report);
      if (partial && endMs - startMs < MIN_FINAL_WINDOW_MS) return;
      const epochMs = Math.round(run.grid.anchorEpochMs + (endMs - run.grid.anchorMs));
      const behind = behindReasons(run, merged, { missing: merged.missing - late, late, carried: carried.length });
      const self = { eventLoopDelay, behind };
      const line = run.options.json
        ? JSON.stringify(clientWindowLine(report, inFlight, epochMs, { gridEpochMs, shard: run.shardLabel, partial }, self, openLoop))
        : formatClientLine(report, inFlight, self) + (openLoop === undefined ? "" : openLoopSuffix(openLoop));
      io.stdout.write(`${line}\n`);
      if (behind !== undefined) {
        behindWindows++;
        io.stderr.write(`${behindWarning(behind, new Date(epochMs), { ...run.load, notSent: report.counts.notSent })}\n`);
      }
    });
  };
  return { emit, withinWait, printed: () => printing, reports, behindWindows: () => behindWindows };
}

/**
 * Why a window is marked behind, or undefined: the client's own lateness, and the worker
 * threads that missed the end of the run (`missing`), the window's wait (`late`), or an earlier
 * window's wait (`carried`: how many earlier windows' counts are in this one).
 */
function behindReasons(
  run: ClientRun,
  { report, eventLoopDelay, inFlight }: ReturnType<typeof mergeShares>,
  threads: { readonly missing: number; readonly late: number; readonly carried: number },
): string | undefined {
  const { missing, late, carried } = threads;
  const shares = run.shares.length;
  const reasons = [
    behindReason(
      {
        lateness: report.lateness,
        eventLoopDelay,
        notSent: report.counts.notSent,
        server: { inFlight, answers: report.latency, timedOut: report.counts.timedout },
      },
      run.options.behindThresholdMs,
    ),
    missing > 0 ? `${missing} of ${shares} worker threads did not answer by the end of the run: their counts are missing` : undefined,
    late > 0
      ? `${late} of ${shares} worker threads did not answer within ${formatDuration(windowWait(run.grid))}: their counts come in a later window`
      : undefined,
    carried > 0 ? `counts of worker threads that answered late for ${carried} earlier window(s) are in this one` : undefined,
  ].filter((reason) => reason !== undefined);
  return reasons.length === 0 ? undefined : reasons.join("; ");
}

/** The client's first line: its load, timeout, strategy, seed and target (credentials hidden). */
export function startLine(options: ClientOptions, share: string, seed: number): string {
  return (
    `client: ${describeLoad(options, share)}, ` +
    `timeout ${formatDuration(options.timeoutMs)}, strategy ${describeStrategy(options)}, seed ${seed}, target ${redactUrl(options.url)}` +
    `${options.retry.honorRetryAfter === true ? ", honoring Retry-After" : ""}${options.propagateDeadline ? ", propagating deadlines" : ""}`
  );
}

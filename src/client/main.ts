import { formatDuration } from "../cli/duration.ts";
import { formatListenAddress } from "../cli/listen-address.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { Timer } from "../clock/clock.ts";
import { realClock } from "../clock/real-clock.ts";
import { addCounts } from "../model/window-merge.ts";
import { addLatencyHistograms, exactMaximum, summarizeLatency } from "../model/latency-histogram.ts";
import type { WindowReport } from "../model/window-stats.ts";
import { serveMetrics } from "../runtime/metrics-endpoint.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { type HerdShare, localShare, type ShareWindow } from "./herd-share.ts";
import { workerShare } from "./herd-worker.ts";
import { type ClientMetrics, clientMetrics } from "./metrics.ts";
import {
  type ClientFlagValues,
  type ClientOptions,
  describeLoad,
  describeStrategy,
  parseClientArgs,
  resolveClientOptions,
} from "./options.ts";
import { formatClientLine, formatClientSummary, openLoopSuffix } from "./reporter.ts";
import { clientNotStartedLine, clientSummaryLine, clientWindowLine } from "../contracts/client-line-writer.ts";
import type { OpenLoopTotals } from "../model/open-loop.ts";
import { partOf, type UserRange } from "./shard.ts";

/** A final window shorter than this is folded into the summary instead of printed. */
const MIN_FINAL_WINDOW_MS = 100;

/** The window the shares reported, as one: counts added, histograms added, open-loop figures added. */
function mergeShares(
  windows: readonly ShareWindow[],
  startMs: number,
  endMs: number,
): { report: WindowReport; inFlight: number; openLoop: OpenLoopTotals | undefined } {
  const histogram = addLatencyHistograms(windows.map((window) => window.histogram));
  return {
    report: {
      startMs,
      endMs,
      counts: addCounts(windows.map((window) => window.counts)),
      latency:
        histogram === undefined
          ? undefined
          : summarizeLatency(
              histogram,
              exactMaximum(windows.map((window) => ({ histogram: window.histogram, maxMs: window.maxLatencyMs }))),
            ),
      histogram,
    },
    inFlight: windows.reduce((sum, window) => sum + window.inFlight, 0),
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
  if (threads === 1) {
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

export async function main(argv: readonly string[], io: ProgramIo): Promise<void> {
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const options = resolveClientOptions(parsed.values);
  const seed = options.seed ?? randomSeed();
  const range = partOf({ firstUser: 0, users: options.clients }, options.shard.index, options.shard.count);
  const threads = Math.max(1, Math.min(options.workers, range.users));
  const shardLabel = options.shard.count > 1 ? `${options.shard.index}/${options.shard.count}` : undefined;
  io.stderr.write(
    `client: ${describeLoad(options, describeShare(options, range, threads))}, ` +
      `timeout ${formatDuration(options.timeoutMs)}, strategy ${describeStrategy(options)}, seed ${seed}, target ${options.url}` +
      `${options.retry.honorRetryAfter === true ? ", honoring Retry-After" : ""}${options.propagateDeadline ? ", propagating deadlines" : ""}\n`,
  );

  const clock = realClock;
  let stopping = false;
  let stopRequest: ((reason: string) => void) | undefined;
  const earlyStop = new Promise<string>((resolve) => (stopRequest = resolve));
  process.on("SIGINT", () => stopRequest?.("SIGINT"));
  process.on("SIGTERM", () => stopRequest?.("SIGTERM"));

  // The metrics read the local share's load, which is made with their observer: filled in below.
  // -metrics-listen runs in one thread only (a usage error with -workers above 1).
  const made: { share?: ReturnType<typeof localShare> | undefined } = {};
  const metrics =
    options.metricsListen === undefined
      ? undefined
      : clientMetrics({
          users: options.arrivals.kind === "open" ? undefined : range.users,
          budget: options.retry.fleet?.budget?.kind === "grpc" ? options.retry.fleet.budget.budget : undefined,
          inFlight: () => made.share?.load.inFlight ?? 0,
          instances: () => made.share?.load.instances,
        });
  // Listen before the load starts: a port in use ends the program before any request.
  const metricsEndpoint = metrics === undefined ? undefined : await serveMetrics(options.metricsListen!, metrics.registry);
  if (metricsEndpoint !== undefined) io.stderr.write(`client: metrics on http://${formatListenAddress(metricsEndpoint.address)}/metrics\n`);

  const { shares, local } = await startShares(parsed.values, options, range, seed, threads, metrics);
  made.share = local;
  // A failure to close is a bug: it surfaces (one line, exit 1) instead of a quiet exit 0.
  const exit = async () => {
    await Promise.all(shares.map((share) => share.close()));
    process.exit(0);
  };

  // -start-at: wait for the instant, then anchor the window grid there.
  const waitMs = options.startAtEpochMs === undefined ? 0 : options.startAtEpochMs - Date.now();
  if (waitMs > 0) {
    io.stderr.write(`client: starting at ${new Date(options.startAtEpochMs!).toISOString()}, in ${formatDuration(Math.round(waitMs))}\n`);
    let wake: NodeJS.Timeout | undefined;
    const reason = await Promise.race([
      earlyStop,
      new Promise<undefined>((resolve) => (wake = setTimeout(() => resolve(undefined), waitMs))),
    ]);
    clearTimeout(wake);
    if (reason !== undefined) {
      io.stdout.write(
        options.json ? `${JSON.stringify(clientNotStartedLine(reason))}\n` : `summary: stopped by ${reason} before the start\n`,
      );
      await exit();
      return;
    }
  }
  const runStartMs = clock.now();
  const runStartEpochMs = Date.now();
  // The window grid: points every interval from the anchor (-start-at, or now). Grid
  // arithmetic is done in ms since the anchor, where the points and a -duration that waited
  // for -start-at are exact integers, so every shard labels its windows alike.
  const anchorEpochMs = options.startAtEpochMs ?? runStartEpochMs;
  const anchorMs = runStartMs - (runStartEpochMs - anchorEpochMs);
  const interval = options.intervalMs;
  // A run that waited for -start-at began at that instant; its -duration counts from there.
  const startOffsetMs = waitMs > 0 || options.startAtEpochMs === undefined ? 0 : runStartMs - anchorMs;
  const stopOffsetMs = options.durationMs > 0 ? startOffsetMs + options.durationMs : Infinity;
  const gridEpoch = (slot: number) => anchorEpochMs + slot * interval;
  for (const share of shares) share.start();

  // Windows are emitted in order, each once every share has answered.
  let printing = Promise.resolve();
  let windowStartMs = runStartMs;
  const emitWindow = (endMs: number, gridEpochMs: number, partial: boolean, collect: Promise<ShareWindow[]>) => {
    const startMs = windowStartMs;
    windowStartMs = endMs;
    printing = printing.then(async () => {
      const { report, inFlight, openLoop } = mergeShares(await collect, startMs, endMs);
      if (partial && endMs - startMs < MIN_FINAL_WINDOW_MS) return;
      const epochMs = Math.round(anchorEpochMs + (endMs - anchorMs));
      const line = options.json
        ? JSON.stringify(clientWindowLine(report, inFlight, epochMs, { gridEpochMs, shard: shardLabel, partial }, openLoop))
        : formatClientLine(report, inFlight) + (openLoop === undefined ? "" : openLoopSuffix(openLoop));
      io.stdout.write(`${line}\n`);
    });
  };

  let windowTimer: Timer | undefined;
  const armNext = (now: number) => {
    const slot = Math.max(1, Math.floor((now - anchorMs) / interval) + 1);
    windowTimer =
      stopOffsetMs <= slot * interval
        ? clock.schedule(anchorMs + stopOffsetMs - now, () => void stop("duration"))
        : clock.schedule(anchorMs + slot * interval - now, function closeWindow() {
            const closedAt = clock.now();
            // Never early, so the grid point just passed is the window's slot (a late wake
            // after a stopped process ends at the last one passed).
            const closedSlot = Math.max(slot, Math.floor((closedAt - anchorMs) / interval));
            emitWindow(closedAt, gridEpoch(closedSlot), false, Promise.all(shares.map((share) => share.closeWindow())));
            armNext(closedAt);
          });
  };
  armNext(runStartMs);

  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    if (windowTimer !== undefined) clock.cancel(windowTimer);
    const now = clock.now();
    const finals = Promise.all(shares.map((share) => share.finish()));
    // A run stopped by -duration ends at its nominal instant: on a grid point it closes a
    // whole window; elsewhere, and on a signal, a partial one in the slot it ends in.
    const endOffsetMs = reason === "duration" ? stopOffsetMs : now - anchorMs;
    emitWindow(
      now,
      gridEpoch(Math.ceil(endOffsetMs / interval)),
      reason !== "duration" || endOffsetMs % interval !== 0,
      finals.then((all) => all.map((final) => final.window)),
    );
    const { report: totals, openLoop } = mergeShares(
      (await finals).map((final) => final.totals),
      runStartMs,
      now,
    );
    await printing;
    io.stdout.write(
      options.json
        ? `${JSON.stringify(clientSummaryLine(totals, reason, Date.now(), shardLabel, openLoop))}\n`
        : `${formatClientSummary(totals)}${openLoop === undefined ? "" : openLoopSuffix(openLoop)}\n`,
    );
    // Do not let a slow socket teardown hold the exit.
    setTimeout(() => process.exit(0), 1000).unref();
    await exit();
  };
  void earlyStop.then((reason) => stop(reason));
}

import { formatDuration } from "../cli/duration.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { Herd } from "../model/herd.ts";
import { createLoad } from "../model/load.ts";
import { OpenLoop } from "../model/open-loop.ts";
import { seededRandom } from "../backoff/random.ts";
import { nextWindowEnd, WindowStats } from "../model/window-stats.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { realClock } from "../clock/real-clock.ts";
import { formatListenAddress } from "../cli/listen-address.ts";
import { serveMetrics } from "../runtime/metrics-endpoint.ts";
import { createHttpTransport } from "./attempt.ts";
import { clientMetrics } from "./metrics.ts";
import { describeLoad, describeStrategy, parseClientArgs, resolveClientOptions } from "./options.ts";
import { clientReport, formatClientLine, formatClientSummary, openLoopFields, openLoopSuffix } from "./reporter.ts";

/** A final window shorter than this is folded into the summary instead of printed. */
const MIN_FINAL_WINDOW_MS = 100;

export async function main(argv: readonly string[], io: ProgramIo): Promise<void> {
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const options = resolveClientOptions(parsed.values);
  const seed = options.seed ?? randomSeed();
  io.stderr.write(
    `client: ${describeLoad(options)}, ` +
      `timeout ${formatDuration(options.timeoutMs)}, strategy ${describeStrategy(options)}, seed ${seed}, target ${options.url}` +
      `${options.retry.honorRetryAfter === true ? ", honoring Retry-After" : ""}${options.propagateDeadline ? ", propagating deadlines" : ""}\n`,
  );

  const clock = realClock;
  const startMs = clock.now();
  const stats = new WindowStats(startMs);
  const transport = createHttpTransport(options.url, options.timeoutMs, { propagateDeadline: options.propagateDeadline });
  const closed = options.arrivals?.kind !== "open";
  // The metrics read the load, which is made with their observer: it is filled in below.
  const made: { load?: Herd | OpenLoop } = {};
  const metrics =
    options.metricsListen === undefined
      ? undefined
      : clientMetrics({
          users: closed ? options.clients : undefined,
          budget: options.retry.fleet?.budget?.kind === "grpc" ? options.retry.fleet.budget.budget : undefined,
          inFlight: () => made.load?.inFlight ?? 0,
          instances: () => made.load?.instances,
        });
  // Listen before the load starts: a port in use ends the program before any request.
  const metricsEndpoint = metrics === undefined ? undefined : await serveMetrics(options.metricsListen!, metrics.registry);
  if (metricsEndpoint !== undefined) io.stderr.write(`client: metrics on http://${formatListenAddress(metricsEndpoint.address)}/metrics\n`);
  const herd = createLoad(
    { users: options.clients, arrivals: options.arrivals, timeoutMs: options.timeoutMs, retry: options.retry },
    clock,
    seededRandom(seed),
    transport,
    metrics?.observer(stats) ?? stats,
  );
  made.load = herd;
  const openLoop = herd instanceof OpenLoop ? herd : undefined;

  const emit = (report: ReturnType<WindowStats["closeWindow"]>, extra: Record<string, unknown> = {}) => {
    const line = options.json
      ? JSON.stringify({ ...clientReport(report, herd.inFlight, Date.now()), ...(openLoop && openLoopFields(openLoop)), ...extra })
      : formatClientLine(report, herd.inFlight) + (openLoop === undefined ? "" : openLoopSuffix(openLoop));
    io.stdout.write(`${line}\n`);
  };

  let windowTimer = clock.schedule(nextWindowEnd(startMs, options.intervalMs, startMs) - startMs, function closeWindow() {
    const now = clock.now();
    emit(stats.closeWindow(now));
    windowTimer = clock.schedule(nextWindowEnd(startMs, options.intervalMs, now) - now, closeWindow);
  });

  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    clock.cancel(windowTimer);
    const now = clock.now();
    const finalWindow = stats.closeWindow(now);
    if (finalWindow.endMs - finalWindow.startMs >= MIN_FINAL_WINDOW_MS) emit(finalWindow, { partial: true });
    herd.stop();
    const totals = stats.totals(now);
    io.stdout.write(
      options.json
        ? `${JSON.stringify({ summary: true, reason, ...clientReport(totals, 0, Date.now()), ...(openLoop && openLoopFields(openLoop)) })}\n`
        : `${formatClientSummary(totals)}${openLoop === undefined ? "" : openLoopSuffix(openLoop)}\n`,
    );
    // A failure to close is a bug: it surfaces as an unhandled rejection (one line, exit 1).
    void transport.close().then(() => process.exit(0));
    // Do not let a slow socket teardown hold the exit.
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  if (options.durationMs > 0) clock.schedule(options.durationMs, () => stop("duration"));
  herd.start();
}

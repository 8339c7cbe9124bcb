import { formatDuration } from "../cli/duration.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { Herd } from "../model/herd.ts";
import { seededRandom } from "../backoff/random.ts";
import { nextWindowEnd, WindowStats } from "../model/window-stats.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { realClock } from "../clock/real-clock.ts";
import { createHttpTransport } from "./attempt.ts";
import { describeStrategy, parseClientArgs, resolveClientOptions } from "./options.ts";
import { clientReport, formatClientLine, formatClientSummary } from "./reporter.ts";

/** A final window shorter than this is folded into the summary instead of printed. */
const MIN_FINAL_WINDOW_MS = 100;

export function main(argv: readonly string[], io: ProgramIo): void {
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return;
  }
  const options = resolveClientOptions(parsed.values);
  const seed = options.seed ?? randomSeed();
  io.stderr.write(
    `client: ${options.clients} clients, lambda ${formatDuration(options.retry.thinkTimeMeanMs)}, ` +
      `timeout ${formatDuration(options.timeoutMs)}, strategy ${describeStrategy(options)}, seed ${seed}, target ${options.url}\n`,
  );

  const clock = realClock;
  const startMs = clock.now();
  const stats = new WindowStats(startMs);
  const transport = createHttpTransport(options.url, options.timeoutMs);
  const herd = new Herd(clock, seededRandom(seed), transport, stats, {
    users: options.clients,
    timeoutMs: options.timeoutMs,
    retry: options.retry,
  });

  const emit = (report: ReturnType<WindowStats["closeWindow"]>, extra: Record<string, unknown> = {}) => {
    const line = options.json
      ? JSON.stringify({ ...clientReport(report, herd.inFlight, Date.now()), ...extra })
      : formatClientLine(report, herd.inFlight);
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
        ? `${JSON.stringify({ summary: true, reason, ...clientReport(totals, 0, Date.now()) })}\n`
        : `${formatClientSummary(totals)}\n`,
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

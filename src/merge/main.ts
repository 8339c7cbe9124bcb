import { DEBUG_FLAG, type FlagSpec, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { instantProblem, parseInstant } from "../cli/instant.ts";
import { UsageError } from "../cli/usage-error.ts";
import { formatClientLine, formatClientSummary } from "../contracts/client-text.ts";
import { clientSummaryLine, clientWindowLine } from "../contracts/client-line-writer.ts";
import { ContractError } from "../contracts/json-line.ts";
import { fileLines, type LineLimits } from "../contracts/line-file.ts";
import { readServerSamples } from "../contracts/server-line.ts";
import { computeMetrics, type ScenarioMetrics } from "../model/scenario-metrics.ts";
import type { ClientWindow, ServerSample } from "../model/timeline.ts";
import { perSecond } from "../model/window-stats.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { readableDelay, timeOrNever } from "../report/readable-delay.ts";
import { type ClientLog, parseClientLog } from "./client-log.ts";
import { type MergedRun, type MergedWindow, mergeClientLogs, range } from "./merge-logs.ts";

const MERGE_FLAGS = [
  {
    name: "json",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print the client's JSON objects instead of its text lines",
  },
  {
    name: "server",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "file",
    description: "the server's -json output, for the server's side of the scenario metrics",
  },
  {
    name: "stop-at",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "time",
    description: "when the server was stopped (RFC 3339 or epoch ms); with -resume-at, the scenario metrics are printed",
    check: instantProblem,
  },
  {
    name: "resume-at",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "time",
    description: "when the server was resumed (RFC 3339 or epoch ms)",
    check: instantProblem,
  },
  {
    name: "limit",
    group: "system",
    kind: "integer",
    default: 30,
    min: 0,
    placeholder: "n",
    description: "the server's concurrency limit (its -limit), for the server's recovery",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

const MERGE_PROGRAM: ProgramDescription<typeof MERGE_FLAGS> = {
  name: "merge",
  summary:
    "Combines the -json outputs of clients that ran one herd in shards (./client -shard i/n) into one timeline\n" +
    "and one summary, printed as one client would print them: counts add up, latency histograms are merged.\n" +
    "A file named - is standard input. Lines that are not JSON (start-up lines in a pod's log) are skipped.",
  flags: MERGE_FLAGS,
  arguments: "file…",
};

/**
 * What merge reads of one input: a client's line is about 1 kB, and a day of 1 s windows
 * about 100 MB. Past these, the input is refused before it fills the memory.
 */
export const INPUT_LIMITS: LineLimits = { maxLineBytes: 1 << 20, maxBytes: 256 << 20 };

/** A file that does not hold what its contract says was given by mistake: a usage error naming the file and line. */
function usageErrors<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw error instanceof ContractError ? new UsageError(error.message) : error;
  }
}

function readLogs(files: readonly string[]): ClientLog[] {
  return files.map((file) => usageErrors(() => parseClientLog(file, fileLines(file, INPUT_LIMITS, "a client's -json output"))));
}

/**
 * The crash experiment's figures from the merged timeline, when the outage's times are
 * given: the clients' side always, the server's when its log is given too.
 */
function scenarioMetrics(
  merged: MergedRun,
  stopAtEpochMs: number,
  resumeAtEpochMs: number,
  /** The server's timeline in epoch ms, when its log was given. */
  server: readonly ServerSample[] | undefined,
  limit: number,
): { metrics: ScenarioMetrics; startEpochMs: number; withServer: boolean } {
  const startEpochMs = range(merged.windows.map((window) => window.report.startMs)).min;
  const endEpochMs = range(merged.windows.map((window) => window.report.endMs)).max;
  const client: ClientWindow[] = merged.windows.map(({ report, behind }) => ({
    startMs: report.startMs - startEpochMs,
    endMs: report.endMs - startEpochMs,
    okPerSec: perSecond(report.counts.ok, report),
    errorsPerSec: perSecond(report.counts.errors, report),
    timedoutPerSec: perSecond(report.counts.timedout, report),
    attemptsPerSec: perSecond(report.counts.attempts, report),
    behind,
  }));
  const samples = (server ?? []).map((sample) => ({ ...sample, atMs: sample.atMs - startEpochMs }));
  const phases = { stopAtMs: stopAtEpochMs - startEpochMs, resumeAtMs: resumeAtEpochMs - startEpochMs, endMs: endEpochMs - startEpochMs };
  return { metrics: computeMetrics(samples, client, phases, limit), startEpochMs, withServer: server !== undefined };
}

function metricsText(metrics: ScenarioMetrics, withServer: boolean): string {
  const clients =
    `metrics: baseline ${metrics.baselineOkPerSec.toFixed(1)} OK/s; attempts during the outage ${metrics.outageAmplification.toFixed(2)}x ` +
    `the baseline (peak ${metrics.peakAmplification.toFixed(2)}x); clients back ${timeOrNever(metrics.clientRecoveryMs)} after the resume`;
  if (metrics.verdict === "invalid") return `${clients}\nmetrics: verdict invalid: ${metrics.why}`;
  if (!withServer) return `${clients}\nmetrics: the server's side needs its -json output (-server file)`;
  return (
    `${clients}\nmetrics: server peak concurrency ${metrics.peakConcurrencyAfterResume} after the resume, peak delay ` +
    `${readableDelay(metrics.peakDelayAfterResumeMs)}, back ${timeOrNever(metrics.serverRecoveryMs)} after the resume; verdict ${metrics.verdict}`
  );
}

/** The merged histograms, in their places of the client's line (a merged window keeps them encoded). */
const encodedHistograms = ({ encoded }: MergedWindow) => ({
  latencyHistogram: encoded.latencyHistogram ?? null,
  latenessHistogram: encoded.latenessHistogram ?? null,
});

/** Each merged window as a client's line (or its -json line), and a warning for each in which a client fell behind. */
function writeWindows(windows: readonly MergedWindow[], json: boolean, io: ProgramIo): void {
  for (const window of windows) {
    const line = json
      ? JSON.stringify({
          ...clientWindowLine(
            window.report,
            window.inFlight,
            window.epochMs,
            { gridEpochMs: window.gridEpochMs ?? window.epochMs, partial: window.partial },
            window,
          ),
          ...encodedHistograms(window),
        })
      : formatClientLine(window.report, window.inFlight, window);
    io.stdout.write(`${line}\n`);
    if (window.behind !== undefined) {
      io.stderr.write(
        `merge: WARNING: a client fell behind in the window ending ${new Date(window.epochMs).toISOString()}: ${window.behind}\n`,
      );
    }
  }
}

export function main(argv: readonly string[], io: ProgramIo): number {
  const parsed = parseFlags(MERGE_PROGRAM, argv);
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const { values, args: files } = parsed;
  if (files.length === 0) throw new UsageError("no input files: give the clients' -json outputs (or - for standard input)");
  if ((values["stop-at"] === undefined) !== (values["resume-at"] === undefined)) {
    throw new UsageError("-stop-at and -resume-at go together");
  }
  const stopAtEpochMs = values["stop-at"] === undefined ? undefined : parseInstant(values["stop-at"]);
  const resumeAtEpochMs = values["resume-at"] === undefined ? undefined : parseInstant(values["resume-at"]);
  if (stopAtEpochMs !== undefined && resumeAtEpochMs !== undefined && resumeAtEpochMs < stopAtEpochMs) {
    throw new UsageError("-resume-at is before -stop-at");
  }
  // Read and checked before anything is printed: the wrong file is a usage error, never NaN metrics.
  const serverFile = values.server;
  const server =
    serverFile === undefined
      ? undefined
      : usageErrors(() =>
          readServerSamples([...fileLines(serverFile, INPUT_LIMITS, "the server's -json output")], 0, serverFile, { requireSome: true }),
        );

  const logs = readLogs(files);
  if (logs.every((log) => log.windows.length === 0 && log.summary === undefined)) {
    throw new UsageError(`no client -json windows in ${files.join(", ")} (run the clients with -json)`);
  }
  const merged = usageErrors(() => mergeClientLogs(logs));
  for (const note of merged.notes) io.stderr.write(`merge: ${note}\n`);

  writeWindows(merged.windows, values.json, io);
  const { summary } = merged;
  const behindWindows = merged.windows.filter((window) => window.behind !== undefined).length;
  if (summary !== undefined) {
    io.stdout.write(
      values.json
        ? `${JSON.stringify({ ...clientSummaryLine(summary.report, summary.reason, summary.epochMs, undefined, behindWindows), ...encodedHistograms(summary) })}\n`
        : `${formatClientSummary(summary.report, behindWindows)}\n`,
    );
  }
  if (stopAtEpochMs !== undefined && resumeAtEpochMs !== undefined && merged.windows.length > 0) {
    const { metrics, withServer } = scenarioMetrics(merged, stopAtEpochMs, resumeAtEpochMs, server, values.limit);
    const clientSide = {
      baselineOkPerSec: metrics.baselineOkPerSec,
      outageAmplification: metrics.outageAmplification,
      peakAmplification: metrics.peakAmplification,
      clientRecoveryMs: metrics.clientRecoveryMs ?? null,
      // A client that fell behind makes any verdict invalid, with or without the server's log.
      ...(metrics.verdict === "invalid" ? { verdict: metrics.verdict, why: metrics.why } : {}),
    };
    io.stdout.write(
      values.json
        ? `${JSON.stringify({ metrics: withServer ? { ...metrics, serverRecoveryMs: metrics.serverRecoveryMs ?? null, ...clientSide } : clientSide })}\n`
        : `${metricsText(metrics, withServer)}\n`,
    );
  } else if (server !== undefined) {
    io.stderr.write("merge: -server is used for the scenario metrics, which need -stop-at and -resume-at\n");
  }
  return 0;
}

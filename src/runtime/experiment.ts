import { createServer } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { ChildProgram } from "./child-program.ts";
import type { Launcher } from "./launcher.ts";
import { clientWindow, parseClientLine, readClientWindows } from "../contracts/client-line.ts";
import { parseServerLine, readServerSamples, serverSample } from "../contracts/server-line.ts";
import type { ClientWindow, Phases, ServerSample } from "../model/timeline.ts";
import type { StrategyRun } from "../strategies/runs.ts";

export interface ExperimentPlan {
  readonly strategy: StrategyRun;
  readonly steadyMs: number;
  readonly outageMs: number;
  readonly observeMs: number;
  readonly serverArgs: readonly string[];
  readonly clientArgs: readonly string[];
}

export type Phase = "starting" | "steady" | "outage" | "observe" | "stopping";

/** What the programs report as they print it, for a live view. Times in ms from the run's start. */
export type LiveRecord =
  | { readonly kind: "phase"; readonly phase: "steady" | "outage" | "observe"; readonly atMs: number }
  | { readonly kind: "server"; readonly sample: ServerSample }
  | { readonly kind: "client"; readonly window: ClientWindow & { readonly throttledPerSec?: number | undefined } };

export interface Progress {
  readonly strategy: string;
  readonly phase: Phase;
  readonly phaseLeftMs: number;
  readonly client: ClientWindow | undefined;
  readonly server: ServerSample | undefined;
}

/** Everything one experiment recorded; times in ms from `startEpochMs`. */
export interface ExperimentRecord {
  readonly strategy: string;
  readonly startEpochMs: number;
  readonly phases: Phases;
  readonly server: ServerSample[];
  readonly client: ClientWindow[];
  /** The raw JSON lines of both programs, as they printed them. */
  readonly serverLines: string[];
  readonly clientLines: string[];
  readonly serverPid: number;
  readonly clientPid: number;
}

/**
 * Runs the article's experiment once, by itself: start ./server and ./client as a user
 * would (with -json), wait for steady state, SIGSTOP the server's pid, wait, SIGCONT it,
 * observe, then stop both by pid and check that nothing is left running or listening.
 */
export async function runExperiment(
  plan: ExperimentPlan,
  options: {
    signal: AbortSignal;
    onProgress: (progress: Progress) => void;
    onStarted: (pids: { server: number; client: number }) => void;
    launcher: Launcher;
    /** Called with every report line of both programs as it arrives, and at each phase. */
    onRecord?: (record: LiveRecord) => void;
  },
): Promise<ExperimentRecord> {
  const startEpochMs = Date.now();
  const serverLaunch = options.launcher("server");
  const server = new ChildProgram("server", serverLaunch.command, [
    ...serverLaunch.args,
    "-listen",
    "127.0.0.1:0",
    "-json",
    ...plan.serverArgs,
  ]);
  let client: ChildProgram | undefined;
  const onRecord = options.onRecord;
  const unfollow: (() => void)[] = [];
  // A line that breaks its contract, seen while following: it ends the run at the next check, with both programs stopped.
  let brokenLine: unknown;
  const live = (read: () => void) => {
    try {
      read();
    } catch (error) {
      brokenLine ??= error;
    }
  };
  if (onRecord !== undefined) {
    unfollow.push(
      follow(server, (text, line) =>
        live(() => onRecord({ kind: "server", sample: serverSample(parseServerLine(text, { file: SERVER_OUTPUT, line }), startEpochMs) })),
      ),
    );
  }
  const abandon = () => {
    server.kill();
    client?.kill();
  };
  options.signal.addEventListener("abort", abandon, { once: true });
  try {
    const listening = await server
      .waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 30_000 })
      .catch(notStarted);
    const port = Number(/:(\d+)\/api/.exec(listening)![1]);
    const clientLaunch = options.launcher("client");
    client = new ChildProgram("client", clientLaunch.command, [
      ...clientLaunch.args,
      "-url",
      `http://127.0.0.1:${port}/api`,
      "-json",
      // Enough threads for a large herd, so that a verdict is never the client's own lag; the user's -workers wins.
      "-workers",
      "auto",
      ...plan.strategy.clientArgs,
      ...plan.clientArgs,
    ]);
    const programs = [server, client];
    const clientStarted = client;
    if (onRecord !== undefined) {
      unfollow.push(
        follow(clientStarted, (text, line) =>
          live(() => {
            const parsed = parseClientLine(text, { file: CLIENT_OUTPUT, line });
            if (parsed.kind !== "window") return;
            onRecord({ kind: "client", window: { ...clientWindow(parsed, startEpochMs), throttledPerSec: parsed.throttledPerSec } });
          }),
        ),
      );
    }
    await clientStarted.waitForLine(/^client: /, { stream: "stderr", timeoutMs: 30_000 }).catch(notStarted);
    options.onStarted({ server: server.pid, client: clientStarted.pid });

    const runStartEpochMs = Date.now();
    const phases: Phases = {
      stopAtMs: runStartEpochMs - startEpochMs + plan.steadyMs,
      resumeAtMs: runStartEpochMs - startEpochMs + plan.steadyMs + plan.outageMs,
      endMs: runStartEpochMs - startEpochMs + plan.steadyMs + plan.outageMs + plan.observeMs,
    };
    const report = (phase: Phase, phaseEndsAtMs: number) =>
      options.onProgress({
        strategy: plan.strategy.name,
        phase,
        phaseLeftMs: Math.max(0, startEpochMs + phaseEndsAtMs - Date.now()),
        client: readClientWindows(
          clientStarted.stdout.map((line) => line.text),
          startEpochMs,
          CLIENT_OUTPUT,
        ).at(-1),
        server: readServerSamples(
          server.stdout.map((line) => line.text),
          startEpochMs,
          SERVER_OUTPUT,
        ).at(-1),
      });

    onRecord?.({ kind: "phase", phase: "steady", atMs: runStartEpochMs - startEpochMs });
    await phase("steady", phases.stopAtMs);
    if (!server.signal("SIGSTOP")) throw diedEarly(server);
    onRecord?.({ kind: "phase", phase: "outage", atMs: phases.stopAtMs });
    await phase("outage", phases.resumeAtMs);
    if (!server.signal("SIGCONT")) throw diedEarly(server);
    onRecord?.({ kind: "phase", phase: "observe", atMs: phases.resumeAtMs });
    await phase("observe", phases.endMs);
    report("stopping", phases.endMs);

    await clientStarted.stop();
    await server.stop();
    await ensureGone(programs, port);
    const serverOutput = server.stdout.map((line) => line.text);
    const clientOutput = clientStarted.stdout.map((line) => line.text);
    const serverLines = serverOutput.filter((line) => line.startsWith("{"));
    const clientLines = clientOutput.filter((line) => line.startsWith("{"));
    return {
      strategy: plan.strategy.name,
      startEpochMs,
      phases,
      server: readServerSamples(serverOutput, startEpochMs, SERVER_OUTPUT),
      client: readClientWindows(clientOutput, startEpochMs, CLIENT_OUTPUT),
      serverLines,
      clientLines,
      serverPid: server.pid,
      clientPid: clientStarted.pid,
    };

    /** Waits until `endsAtMs`, reporting progress, and fails if a program dies meanwhile. */
    async function phase(name: Phase, endsAtMs: number): Promise<void> {
      while (Date.now() < startEpochMs + endsAtMs) {
        if (options.signal.aborted) throw new Error("interrupted");
        if (brokenLine !== undefined) throw brokenLine;
        for (const program of programs) if (!program.running) throw diedEarly(program);
        report(name, endsAtMs);
        await new Promise((wake) => setTimeout(wake, Math.min(250, startEpochMs + endsAtMs - Date.now())));
      }
    }
  } catch (error) {
    abandon();
    await Promise.all([server.exited, client?.exited]);
    throw error;
  } finally {
    options.signal.removeEventListener("abort", abandon);
    for (const stop of unfollow) stop();
  }
}

/** How messages name the programs' output: a line that breaks its contract is a bug in that program. */
const SERVER_OUTPUT = "the server's stdout";
const CLIENT_OUTPUT = "the client's stdout";

/** Calls `onLine` with each JSON line a program prints on stdout (and its line number), once, as it arrives. */
function follow(program: ChildProgram, onLine: (text: string, line: number) => void): () => void {
  let next = 0;
  return program.onChange(() => {
    while (next < program.stdout.length) {
      const text = program.stdout[next++]!.text;
      if (text.startsWith("{")) onLine(text, next);
    }
  });
}

/** A program that did not come up (it exited, or never said it was ready) fails the run with what it said. */
function notStarted(error: unknown): never {
  throw error instanceof Error ? new FatalError(error.message) : error;
}

function diedEarly(program: ChildProgram): FatalError {
  return new FatalError(`${program.name} (pid ${program.pid}) ended early${program.said()}`);
}

/** Both pids gone and the port free again, or an error saying what is left. */
async function ensureGone(programs: readonly ChildProgram[], port: number): Promise<void> {
  for (const program of programs) {
    try {
      process.kill(program.pid, 0);
      throw new FatalError(`${program.name} (pid ${program.pid}) is still running`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }
  await new Promise<void>((resolveFree, reject) => {
    const probe = createServer();
    probe.once("error", () => reject(new FatalError(`port ${port} is still in use after the run`)));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolveFree()));
  });
}

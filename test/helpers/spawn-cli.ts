import { resolve } from "node:path";
import { ChildProgram } from "../../src/runtime/child-program.ts";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

export interface SpawnedCli {
  readonly program: ChildProgram;
  readonly pid: number;
  readonly stdoutLines: string[];
  readonly stderrLines: string[];
  /** The exit code (or signal) once the process has ended and its output has all been read. */
  readonly exited: Promise<number | string>;
  readonly exitCode: number | null;
  waitForLine(pattern: RegExp, options?: { stream?: "stdout" | "stderr"; timeoutMs?: number; fromIndex?: number }): Promise<string>;
  signal(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProgram>();

/**
 * Every process a test starts is killed by its own process group, also when the test fails: after
 * each test of every file (test/helpers/each-file.ts, a setup file, registers it per file: a hook
 * registered when this module is imported would run for the first importing file only, where
 * workers are reused from file to file).
 */
export async function stopSpawnedPrograms(): Promise<void> {
  const programs = [...running];
  running.clear();
  for (const program of programs) program.kill();
  await Promise.all(programs.map((program) => program.exited));
}

/**
 * Spawns a root executable (`server`, `client`) or any command, in its own process group.
 * `shell` runs first in a bash that then execs the program (e.g. "ulimit -n 64").
 */
export function spawnCli(
  executable: string,
  args: readonly string[],
  options: { shell?: string; command?: string; cwd?: string } = {},
): SpawnedCli {
  const command = options.command ?? resolve(REPO_ROOT, executable);
  const cwd = options.cwd ?? REPO_ROOT;
  const program =
    options.shell === undefined
      ? new ChildProgram(executable, command, args, { cwd })
      : new ChildProgram(executable, "bash", ["-c", `${options.shell}; exec "$0" "$@"`, command, ...args], { cwd });
  running.add(program);
  void program.exited.then(() => running.delete(program));
  // "exit" can come while the last lines are still in the pipes (seen: a port-in-use line missing
  // at load 15); "close" comes once both streams have ended too, so a test reads all the output.
  const closed = new Promise<number | string>((resolve) => {
    program.child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  const exited = program.exited.then((result) => (result === "spawn error" ? result : closed));
  return {
    program,
    pid: program.pid,
    get stdoutLines() {
      return program.stdout.map((line) => line.text);
    },
    get stderrLines() {
      return program.stderr.map((line) => line.text);
    },
    exited,
    get exitCode() {
      return program.child.exitCode;
    },
    // The limit only bounds a hang, as eventually()'s: a loaded machine may take seconds to start a program.
    waitForLine: (pattern, { stream, timeoutMs = 30_000, fromIndex } = {}) =>
      program.waitForLine(pattern, {
        timeoutMs,
        ...(stream === undefined ? {} : { stream }),
        ...(fromIndex === undefined ? {} : { fromIndex }),
      }),
    signal: (signal) => {
      program.signal(signal);
    },
  };
}

/** Starts ./server on an ephemeral loopback port and returns it with its port. */
export async function spawnServer(args: readonly string[] = [], options: { shell?: string } = {}) {
  const server = spawnCli("server", ["-listen", "127.0.0.1:0", ...args], options);
  const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 20_000 });
  const port = Number(/:(\d+)\/api/.exec(line)![1]);
  return { server, port, url: `http://127.0.0.1:${port}/api` };
}

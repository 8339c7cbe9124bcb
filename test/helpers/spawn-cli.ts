import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach } from "vitest";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

export interface SpawnedCli {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly stdoutLines: string[];
  readonly stderrLines: string[];
  /** Resolves with the first line (stdout or stderr) matching `pattern` from `fromIndex` on. */
  waitForLine(pattern: RegExp, options?: { stream?: "stdout" | "stderr"; timeoutMs?: number; fromIndex?: number }): Promise<string>;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  signal(signal: NodeJS.Signals): void;
}

const running = new Set<SpawnedCli>();

/** Every process a test starts is stopped by its own process group, also when the test fails. */
afterEach(async () => {
  const stillRunning = [...running];
  running.clear();
  for (const cli of stillRunning) {
    try {
      process.kill(-cli.pid, "SIGCONT");
      process.kill(-cli.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await Promise.all(stillRunning.map((cli) => cli.exited));
});

/** Spawns a root executable (`server`, `client`, …) in its own process group. */
export function spawnCli(executable: string, args: readonly string[], options: { shell?: string } = {}): SpawnedCli {
  const command = resolve(REPO_ROOT, executable);
  const child =
    options.shell === undefined
      ? spawn(command, args, { cwd: REPO_ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("bash", ["-c", `${options.shell}; exec "$0" "$@"`, command, ...args], {
          cwd: REPO_ROOT,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
  if (child.pid === undefined) throw new Error(`could not start ${executable}`);
  const stdoutLines: string[] = [];
  const stderrLines: string[] = [];
  const waiters = new Set<() => void>();
  const collect = (stream: NodeJS.ReadableStream | null, lines: string[]) => {
    let partial = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const pieces = (partial + chunk).split("\n");
      partial = pieces.pop() ?? "";
      lines.push(...pieces);
      for (const wake of waiters) wake();
    });
  };
  collect(child.stdout, stdoutLines);
  collect(child.stderr, stderrLines);
  const exited = new Promise<number | string>((resolveExit) => {
    child.on("exit", (code, signal) => {
      for (const wake of waiters) wake();
      resolveExit(code ?? signal ?? "unknown");
    });
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    running.delete(cli);
  });
  const cli: SpawnedCli = {
    child,
    pid: child.pid,
    stdoutLines,
    stderrLines,
    exited,
    signal: (signal) => process.kill(child.pid!, signal),
    waitForLine(pattern, { stream, timeoutMs = 10_000, fromIndex = 0 } = {}) {
      return new Promise((resolveLine, reject) => {
        const check = () => {
          const sources = stream === "stdout" ? [stdoutLines] : stream === "stderr" ? [stderrLines] : [stdoutLines, stderrLines];
          for (const lines of sources) {
            const found = lines.slice(fromIndex).find((line) => pattern.test(line));
            if (found !== undefined) {
              finish();
              resolveLine(found);
              return;
            }
          }
          if (hasExited) {
            finish();
            reject(new Error(`${executable} exited before printing ${pattern}; stderr: ${stderrLines.join(" | ")}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`timed out waiting for ${pattern}; stdout: ${stdoutLines.slice(-5).join(" | ")}; stderr: ${stderrLines.join(" | ")}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
  running.add(cli);
  return cli;
}

/** Starts ./server on an ephemeral loopback port and returns it with its port. */
export async function spawnServer(args: readonly string[] = [], options: { shell?: string } = {}) {
  const server = spawnCli("server", ["-listen", "127.0.0.1:0", ...args], options);
  const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 20_000 });
  const port = Number(/:(\d+)\/api/.exec(line)![1]);
  return { server, port, url: `http://127.0.0.1:${port}/api` };
}

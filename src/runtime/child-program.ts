import { type ChildProcess, spawn } from "node:child_process";
import { FatalError } from "../cli/usage-error.ts";

export interface ReceivedLine {
  readonly text: string;
  /** Date.now() when the line arrived. */
  readonly receivedAtEpochMs: number;
}

/**
 * A program started in its own process group, its output collected line by line. It is
 * stopped by its own pid (and group), never by name.
 */
export class ChildProgram {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly stdout: ReceivedLine[] = [];
  readonly stderr: ReceivedLine[] = [];
  /** Resolves with the exit code, or the signal's name, once the process has ended. */
  readonly exited: Promise<number | string>;
  private hasExited = false;
  private readonly listeners = new Set<() => void>();

  constructor(name: string, command: string, args: readonly string[], options: { cwd?: string } = {}) {
    this.name = name;
    this.child = spawn(command, args, { cwd: options.cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    // Node reports why (ENOENT, EACCES) only later, as an event; the command says enough to fix it.
    if (this.child.pid === undefined) throw new FatalError(`could not start ${name}: ${command}`);
    this.pid = this.child.pid;
    this.collect(this.child.stdout, this.stdout);
    this.collect(this.child.stderr, this.stderr);
    this.exited = new Promise((resolve) => {
      // "close", not "exit": the output still in the pipes has then been read, so no last line is lost.
      this.child.on("close", (code, signal) => {
        this.hasExited = true;
        this.notify();
        resolve(code ?? signal ?? "unknown");
      });
      this.child.on("error", () => {
        this.hasExited = true;
        this.notify();
        resolve("spawn error");
      });
    });
  }

  get running(): boolean {
    return !this.hasExited;
  }

  /** Calls `listener` after every new line and on exit; returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends a signal to the program itself; false when it is already gone. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.hasExited) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch (error) {
      if (isGone(error)) return false;
      throw error;
    }
  }
  /** Sends a signal to the program's process group (it and the processes it started); false when it is already gone. */
  signalGroup(signal: NodeJS.Signals): boolean {
    if (this.hasExited) return false;
    signalGroup(this.pid, signal);
    return true;
  }

  /**
   * Resolves with the first line matching `pattern` (in one stream or either, from line
   * `fromIndex` on), or rejects when the program exits first or the time is up.
   */
  waitForLine(pattern: RegExp, options: { stream?: "stdout" | "stderr"; timeoutMs: number; fromIndex?: number }): Promise<string> {
    const { stream, timeoutMs, fromIndex = 0 } = options;
    const sources = stream === "stdout" ? [this.stdout] : stream === "stderr" ? [this.stderr] : [this.stdout, this.stderr];
    return new Promise((resolve, reject) => {
      const check = () => {
        for (const lines of sources) {
          const found = lines.slice(fromIndex).find((line) => pattern.test(line.text));
          if (found !== undefined) return done(() => resolve(found.text));
        }
        if (this.hasExited) {
          return done(() => reject(new Error(`${this.name} exited before printing ${pattern}${this.said()}`)));
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`${this.name} did not print ${pattern} within ${timeoutMs} ms${this.said()}`))),
        timeoutMs,
      );
      const unsubscribe = this.onChange(check);
      const done = (finish: () => void) => {
        clearTimeout(timer);
        unsubscribe();
        finish();
      };
      check();
    });
  }

  /** The last lines the program wrote to stderr, for error messages. */
  said(): string {
    const lines = this.stderr
      .map((line) => line.text)
      .filter((line) => line !== "")
      .slice(-3);
    return lines.length === 0 ? "" : `: ${lines.join(" | ")}`;
  }

  /**
   * Stops the program: resumes it if it was stopped (a stopped process cannot act on
   * SIGTERM), asks it to end, and kills its whole group if it has not ended in time.
   */
  async stop(graceMs = 3_000): Promise<number | string> {
    if (this.hasExited) return this.exited;
    this.signal("SIGCONT");
    this.signal("SIGTERM");
    const timer = setTimeout(() => signalGroup(this.pid, "SIGKILL"), graceMs);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }

  /**
   * Stops the program's whole process group: SIGCONT and SIGTERM to every process in it (a shell
   * does not pass SIGTERM on to its children), then SIGKILL to what is left once the program has
   * ended or the grace is up (a child that ignored SIGTERM goes with its group).
   */
  async stopGroup(graceMs = 3_000): Promise<number | string> {
    signalGroup(this.pid, "SIGCONT");
    signalGroup(this.pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(this.pid, "SIGKILL"), graceMs);
    const result = await this.exited;
    clearTimeout(timer);
    signalGroup(this.pid, "SIGKILL");
    return result;
  }

  /** Kills the program's whole process group at once (for interrupts and failed runs). */
  kill(): void {
    for (const signal of ["SIGCONT", "SIGKILL"] as const) signalGroup(this.pid, signal);
  }

  private collect(stream: NodeJS.ReadableStream | null, lines: ReceivedLine[]): void {
    if (stream === null) return;
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const pieces = (partial + chunk).split("\n");
      partial = pieces.pop() ?? "";
      const receivedAtEpochMs = Date.now();
      for (const text of pieces) lines.push({ text, receivedAtEpochMs });
      this.notify();
    });
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/** ESRCH: the process (group) has already ended; any other failure to signal it is a bug worth seeing. */
function isGone(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "ESRCH";
}

/** A signal to every process of a group; nothing when the group has ended. */
export function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** Whether a process exists (signal 0 sends nothing). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    // EPERM: it exists, as another user's.
    return true;
  }
}

import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { FatalError, UsageError } from "../cli/usage-error.ts";
import type { ActiveFault } from "../model/faults/control.ts";
import { CONTROLLED_KINDS } from "../model/faults/kinds.ts";
import { ChildProgram, processExists, signalGroup } from "./child-program.ts";
import type { PlayedServer } from "./server-process.ts";

/**
 * How the crash experiment may act on a service the user runs (demo -target, choose -validate -target):
 * - command: it starts the command in a process group of its own, stops and resumes that group
 *   (SIGSTOP, SIGCONT: what Ctrl-Z and fg do to a job), kills it for a crash and starts it again;
 * - pid: a process already running, whose process group it may stop and resume, nothing more;
 * - none: only the URL; faults that need the process (stop, crash) are refused before the run.
 */
export type TargetControl =
  { readonly kind: "command"; readonly command: string } | { readonly kind: "pid"; readonly pid: number } | { readonly kind: "none" };

/** How long a started command may take to accept a connection: bounds a hang, never a result. */
const READY_TIMEOUT_MS = 30_000;
/** Between two connection attempts while it starts. */
const READY_POLL_MS = 50;
/** How long the group has to end on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

/**
 * A service the user runs, as the crash experiment plays it: started (with a command), reachable
 * at `url`, its process group stopped and resumed, killed and started again. Every process it
 * starts is ended by its group, even when the run fails; a group it did not start is only ever
 * resumed on the way out, never left stopped.
 */
export class TargetService implements PlayedServer {
  readonly url: URL;
  readonly control: TargetControl;
  /** Every incarnation of a command, the first first. */
  readonly incarnations: ChildProgram[] = [];
  private current: ChildProgram | undefined;
  /** The group signalled: the command's (its pid: it leads its own group), or the given pid's. */
  private group: number | undefined;
  /** A pid's or a URL's service accepted a connection once. */
  private checked = false;

  constructor(url: URL, control: TargetControl) {
    this.url = url;
    this.control = control;
  }

  /** The command's process now; undefined while crashed, or without a command. */
  get program(): ChildProgram | undefined {
    return this.current;
  }

  /** The group a stop or a crash strikes, for the messages; undefined before start. */
  get processGroup(): number | undefined {
    return this.group;
  }

  /** The URL's port: the experiment checks no port of a service it did not start as freed. */
  get listeningPort(): number {
    return Number(this.url.port || (this.url.protocol === "https:" ? 443 : 80));
  }

  /** How messages name what a signal strikes: its process group, or nothing (-target alone: spikes only). */
  get signalledName(): string {
    return this.group === undefined ? "(its URL only)" : `(process group ${this.group})`;
  }

  /**
   * A target given by its pid that has ended: the run fails in one line rather than judging a
   * service that is gone. (A command's process is watched as a program of the run.) A target has
   * no fault control: the demo refuses capacity, slow and errors before the run (choose -validate plays only stops).
   */
  get failure(): Error | undefined {
    const control = this.control;
    if (control.kind !== "pid" || processExists(control.pid)) return undefined;
    return new FatalError(`the target's process ${control.pid} ended during the experiment`);
  }

  setFaults(faults: readonly ActiveFault[]): void {
    if (faults.length > 0) throw new FatalError(`a target has no fault control: ${CONTROLLED_KINDS.join(", ")} need ./server`);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  /** A target prints nothing the experiment reads: its watcher stands for a server's reports. */
  stdoutLines(): string[] {
    return [];
  }

  /** SIGSTOP or SIGCONT to the whole group; true, also while a crash has it down (nothing to signal, as for ./server). */
  signal(signal: "SIGSTOP" | "SIGCONT"): boolean {
    if (this.control.kind === "command" && this.current === undefined) return true;
    this.signalTargetGroup(signal);
    return true;
  }

  /**
   * Starts the command (or checks the pid), then waits until the URL accepts a connection; nothing
   * when its command runs already. A pid or a URL is checked for a connection the first time only:
   * a later start (each strategy's) may meet it still overloaded, which the settle judges.
   */
  async start(stop?: AbortSignal): Promise<void> {
    const control = this.control;
    if (this.current?.running === true) return;
    if (control.kind === "pid") this.group = processGroupToSignal(control.pid);
    if (control.kind !== "command") {
      if (!this.checked) await this.refuseUnreachable();
      this.checked = true;
      return;
    }
    if (this.incarnations.length === 0) await this.refuseTakenPort();
    const program = new ChildProgram("target", "/bin/sh", ["-c", control.command]);
    this.incarnations.push(program);
    this.current = program;
    this.group = program.pid;
    await waitUntilReady(this.url, program, stop);
  }

  /**
   * What the first start() refuses, checked without starting anything, before a long run (choose
   * measures for minutes first): a pid the run may not stop, a service that does not accept
   * connections, or a port something else holds before the command runs.
   */
  async preflight(): Promise<void> {
    if (this.control.kind === "pid") processGroupToSignal(this.control.pid);
    if (this.control.kind === "command") await this.refuseTakenPort();
    else await this.refuseUnreachable();
  }

  private async refuseUnreachable(): Promise<void> {
    if (!(await accepts(this.url))) throw new FatalError(`cannot connect to ${this.url.host}: is the service running?`);
  }

  /** Something else answering on the port would pass for the command's service. */
  private async refuseTakenPort(): Promise<void> {
    if (await accepts(this.url)) {
      throw new FatalError(
        `${this.url.host} accepts connections already: -target-cmd starts the service itself (stop the one running, or use -target-pid)`,
      );
    }
  }

  /** A crash: the command's whole group killed at once; connections are refused until start(). */
  async crash(): Promise<void> {
    const program = this.current;
    if (this.control.kind !== "command") throw new FatalError("a crash needs -target-cmd, to start the service again");
    if (program === undefined) return;
    this.current = undefined;
    program.kill();
    await program.exited;
  }

  /** The end of a run: the command's group asked to end, then killed; a group not ours resumed, never left stopped. */
  async stop(): Promise<void> {
    if (this.control.kind === "pid") {
      this.resumeQuietly();
      return;
    }
    const program = this.current;
    if (program === undefined) return;
    this.current = undefined;
    await program.stopGroup(STOP_GRACE_MS);
  }

  /** Kills at once what it started (an interrupt, a failed run); resumes a group it did not start. */
  kill(): void {
    if (this.control.kind === "pid") this.resumeQuietly();
    for (const program of this.incarnations) program.kill();
  }

  private resumeQuietly(): void {
    if (this.group !== undefined) signalGroup(this.group, "SIGCONT");
  }

  private signalTargetGroup(signal: "SIGSTOP" | "SIGCONT"): void {
    if (this.control.kind === "none")
      throw new FatalError(`a stop needs -target-cmd or -target-pid: ${signal} goes to the service's processes`);
    if (this.group === undefined) throw new FatalError(`the target is not running: no process group to send ${signal} to`);
    try {
      process.kill(-this.group, signal);
    } catch (error) {
      throw new FatalError(`${signal} to the target's process group ${this.group}: ${(error as NodeJS.ErrnoException).code ?? error}`);
    }
  }
}

/**
 * The process group of `pid`, which the experiment may stop: a process of this user's, not pid 1, and
 * not in this program's own group (stopping that would stop the demo or choose). Anything else is a usage
 * error of one line.
 */
export function processGroupToSignal(pid: number): number {
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new UsageError(`-target-pid ${pid}: not a process the experiment may stop`);
  const stat = procStat(pid);
  if (stat === undefined) throw new UsageError(`-target-pid ${pid}: no such process`);
  const uid = processUid(pid);
  const own = process.getuid?.();
  if (uid !== undefined && own !== undefined && uid !== own) {
    throw new UsageError(`-target-pid ${pid}: the process belongs to uid ${uid}, not to this user (uid ${own})`);
  }
  const ownGroup = procStat(process.pid)?.group;
  if (stat.group === ownGroup) {
    throw new UsageError(
      `-target-pid ${pid}: the process is in this program's own process group ${ownGroup}; stopping it would stop this program too`,
    );
  }
  if (stat.group <= 1) throw new UsageError(`-target-pid ${pid}: its process group ${stat.group} is not one the experiment may stop`);
  return stat.group;
}

/** A process's group, from /proc (Linux); undefined when there is no such process. */
function procStat(pid: number): { readonly group: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // After the command's closing parenthesis (the command itself may hold spaces and parentheses): state, ppid, pgrp.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { group: Number(fields[2]) };
}

function processUid(pid: number): number | undefined {
  try {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return uid === undefined ? undefined : Number(uid);
  } catch {
    return undefined;
  }
}

/** A connection that has not come up within this is none: a full accept queue drops SYNs. */
const CONNECT_TIMEOUT_MS = 2_000;

/** Whether the URL's host and port accept a TCP connection now. */
function accepts(url: URL): Promise<boolean> {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port });
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Waits until the started command's URL accepts a connection; fails when the command exits first
 * (or has left by then: a server that daemonizes leaves its group), or after READY_TIMEOUT_MS,
 * or on `stop`.
 */
async function waitUntilReady(url: URL, program: ChildProgram, stop?: AbortSignal): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await accepts(url))) {
    if (stop?.aborted === true) throw new Error("interrupted");
    if (!program.running) {
      throw new FatalError(`the target command ended (${await program.exited}) before ${url.host} accepted a connection${program.said()}`);
    }
    if (Date.now() > deadline)
      throw new FatalError(`the target command did not accept a connection on ${url.host} within 30 s${program.said()}`);
    await new Promise((wake) => setTimeout(wake, READY_POLL_MS));
  }
  if (!program.running) {
    throw new FatalError(
      `the target command ended (${await program.exited}) as ${url.host} began to accept: it must stay in the foreground, ` +
        'in its process group (gunicorn without -D, nginx with "daemon off;")',
    );
  }
}

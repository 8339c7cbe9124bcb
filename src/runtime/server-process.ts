import { request } from "node:http";
import { FatalError } from "../cli/usage-error.ts";
import { type ActiveFault, formatActiveFaults } from "../model/faults/control.ts";
import { ChildProgram } from "./child-program.ts";

/** How long a starting server may take to say it listens: bounds a hang, never a result. */
const START_TIMEOUT_MS = 30_000;

/**
 * ./server as an experiment runs it, through its crashes: each incarnation is a program of
 * its own (killed with its process group, started again on the same port), its output kept
 * in order. With `faultControl` the server runs its fault control on a loopback port, and
 * the faults set through it are set again on every new incarnation.
 */
export class ServerProcess {
  /** Every incarnation, the first first. */
  readonly incarnations: ChildProgram[] = [];
  private current: ChildProgram | undefined;
  private port = 0;
  private adminPort: number | undefined;
  private faults: readonly ActiveFault[] = [];
  /** PUTs to the fault control, one after another, so that the last set is the one that holds. */
  private controlQueue: Promise<void> = Promise.resolve();
  private controlFailure: Error | undefined;

  private readonly spawn: (listen: string) => ChildProgram;
  private readonly faultControl: boolean;
  private readonly onIncarnation: (program: ChildProgram) => void;

  constructor(spawn: (listen: string) => ChildProgram, faultControl: boolean, onIncarnation: (program: ChildProgram) => void = () => {}) {
    this.spawn = spawn;
    this.faultControl = faultControl;
    this.onIncarnation = onIncarnation;
  }

  /** The incarnation running now; undefined while crashed. */
  get program(): ChildProgram | undefined {
    return this.current;
  }

  get listeningPort(): number {
    return this.port;
  }

  /** Starts the first incarnation on a free port, or the next on the same port; resolves once it listens. */
  async start(): Promise<ChildProgram> {
    const program = this.spawn(this.port === 0 ? "127.0.0.1:0" : `127.0.0.1:${this.port}`);
    this.incarnations.push(program);
    this.current = program;
    this.onIncarnation(program);
    const listening = await program
      .waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: START_TIMEOUT_MS })
      .catch(notStarted);
    this.port = Number(/:(\d+)\/api/.exec(listening)![1]);
    if (this.faultControl) {
      const control = await program
        .waitForLine(/fault control on http:\/\/127\.0\.0\.1:\d+\/faults/, { stream: "stderr", timeoutMs: START_TIMEOUT_MS })
        .catch(notStarted);
      this.adminPort = Number(/:(\d+)\/faults/.exec(control)![1]);
      if (this.faults.length > 0) this.setFaults(this.faults);
    }
    return program;
  }

  /** A crash: the whole process group killed at once (SIGKILL); connections are refused until start(). */
  async crash(): Promise<void> {
    const program = this.current;
    if (program === undefined) return;
    this.current = undefined;
    this.adminPort = undefined;
    program.kill();
    await program.exited;
  }

  /** Sets the faults of the fault control (all of them: the last call holds); a crashed server gets them when it starts again. */
  setFaults(faults: readonly ActiveFault[]): void {
    this.faults = faults;
    const adminPort = this.adminPort;
    const program = this.current;
    if (adminPort === undefined || program === undefined) return;
    const body = faults.length === 0 ? "" : formatActiveFaults(faults);
    this.controlQueue = this.controlQueue.then(() =>
      putFaults(adminPort, body).catch((error: unknown) => {
        // A server that crashed meanwhile gets them on its restart; one still running that refuses them is a failure.
        if (this.current === program && program.running) {
          this.controlFailure ??= new FatalError(`server (pid ${program.pid}): fault control: ${(error as Error).message}`);
        }
      }),
    );
  }

  /** The first failure of the fault control, if any: it ends the run at the next check. */
  get failure(): Error | undefined {
    return this.controlFailure;
  }

  /** Waits for the fault control's requests in flight. */
  settled(): Promise<void> {
    return this.controlQueue;
  }

  /** Every incarnation's stdout, in order. */
  stdoutLines(): string[] {
    return this.incarnations.flatMap((program) => program.stdout.map((line) => line.text));
  }

  kill(): void {
    for (const program of this.incarnations) program.kill();
  }

  /**
   * SIGSTOP or SIGCONT to the incarnation running now, its process group (-workers: every process of
   * the server); false when it has ended (true while crashed: nothing to signal).
   */
  signal(signal: "SIGSTOP" | "SIGCONT"): boolean {
    return this.current?.signalGroup(signal) ?? true;
  }

  /** The end of a run: the incarnation running now asked to end, then killed. */
  async stop(): Promise<void> {
    await this.current?.stop();
  }

  /** How messages name what a signal struck: the incarnation's pid. */
  get signalledName(): string {
    return `pid ${this.current?.pid ?? "(crashed)"}`;
  }
}

/** What an experiment needs of a server it plays faults on: ./server (ServerProcess), or a service the user runs (TargetService). */
export interface PlayedServer {
  readonly program: ChildProgram | undefined;
  readonly incarnations: readonly ChildProgram[];
  readonly listeningPort: number;
  readonly failure: Error | undefined;
  readonly signalledName: string;
  start(stop?: AbortSignal): Promise<unknown>;
  crash(): Promise<void>;
  setFaults(faults: readonly ActiveFault[]): void;
  settled(): Promise<void>;
  stdoutLines(): string[];
  signal(signal: "SIGSTOP" | "SIGCONT"): boolean;
  stop(): Promise<void>;
  kill(): void;
}

function putFaults(port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port, method: "PUT", path: "/faults", timeout: 600_000 }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`${response.statusCode}: ${text.trim()}`))));
    });
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer in 10 min")));
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** A program that did not come up (it exited, or never said it was ready) fails the run with what it said. */
export function notStarted(error: unknown): never {
  throw error instanceof Error ? new FatalError(error.message) : error;
}

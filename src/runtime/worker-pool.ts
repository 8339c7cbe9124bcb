import { availableParallelism } from "node:os";
import { parentPort, Worker } from "node:worker_threads";

/*
 * Worker threads for the programs: a tiny pool for independent jobs (the simulator's runs,
 * choose's measurements) and the plumbing to start a long-lived worker (a share of the
 * client's herd). Every worker starts from one entry file, worker-entry (an entry beside the
 * programs', in src/bin: it names their worker modules, which this layer may not), which loads
 * the module of the worker's role.
 *
 * Where that entry file is depends on how the program runs, and import.meta.url tells:
 * - from the TypeScript sources (tsx, vitest): src/bin/worker-entry.ts. Node 20 does
 *   not apply the main thread's module hooks to workers, so the worker first boots through
 *   ts-worker-boot.mjs, which registers tsx in the worker and then imports the entry;
 * - from the package build (scripts/build.mjs to dist/): dist/bin/worker-entry.js;
 * - from a root shim's bundle (node_modules/.cache/thundering-herd/<program>.mjs, into which
 *   this file is bundled): worker-entry.mjs, which scripts/bundle.mjs builds beside it.
 */

/** What a worker receives: its role (which module runs it) and that module's data. */
export interface WorkerStart {
  readonly role: WorkerRole;
  readonly data: unknown;
  /** The entry module, when the script is a boot file that must import it. */
  readonly entry?: string;
}

/** The modules a worker can run; worker-entry maps each to its module. */
export type WorkerRole = "sim" | "client-herd" | "choose";

/** The script a worker thread runs, and the entry module it must import when the script is a boot file. */
export function workerScript(moduleUrl: string = import.meta.url): { script: URL; entry: string | undefined } {
  if (moduleUrl.endsWith(".ts")) {
    return { script: new URL("./ts-worker-boot.mjs", moduleUrl), entry: new URL("../bin/worker-entry.ts", moduleUrl).href };
  }
  // The bundle is one folder; the build keeps src/'s folders.
  if (moduleUrl.endsWith(".mjs")) return { script: new URL("./worker-entry.mjs", moduleUrl), entry: undefined };
  return { script: new URL("../bin/worker-entry.js", moduleUrl), entry: undefined };
}

/** Starts one worker thread in `role`. */
export function startWorker(role: WorkerRole, data: unknown): Worker {
  const { script, entry } = workerScript();
  const workerData: WorkerStart = entry === undefined ? { role, data } : { role, data, entry };
  // stdout and stderr go through the main thread, so nothing a worker writes interleaves mid-line.
  return new Worker(script, { workerData });
}

/** The default parallelism: every core Node may use. */
export function defaultParallelism(): number {
  return availableParallelism();
}

interface TaskMessage {
  readonly id: number;
  readonly task: string;
  readonly input: unknown;
}

type ResultMessage =
  | { readonly id: number; readonly ok: true; readonly output: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly stack: string | undefined };

interface PendingTask {
  readonly message: TaskMessage;
  readonly resolve: (output: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** One worker of the pool and the task it runs, if any. */
interface PoolThread {
  readonly worker: Worker;
  task: PendingTask | undefined;
}

/**
 * A fixed number of worker threads of one role running tasks from a queue, in the order
 * they were asked for; each result comes back to its own promise, whatever order the
 * workers finish in. A worker that dies fails its task and is replaced for the next ones.
 */
export class WorkerPool {
  private readonly role: WorkerRole;
  private readonly size: number;
  private readonly threads: PoolThread[] = [];
  private readonly queue: PendingTask[] = [];
  private nextId = 0;
  private closed = false;

  constructor(role: WorkerRole, size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`WorkerPool: size must be a positive integer, got ${size}`);
    this.role = role;
    this.size = size;
  }

  /** Runs `task` with `input` (structured-cloned both ways) on the next free worker. */
  run<Output>(task: string, input: unknown): Promise<Output> {
    if (this.closed) return Promise.reject(new Error("WorkerPool: closed"));
    return new Promise<Output>((resolve, reject) => {
      this.queue.push({ message: { id: this.nextId++, task, input }, resolve: resolve as (output: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Stops every worker; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error("WorkerPool: closed"));
    const threads = this.threads.splice(0);
    for (const thread of threads) thread.task?.reject(new Error("WorkerPool: closed"));
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((candidate) => candidate.task === undefined);
      if (thread === undefined) {
        if (this.threads.length >= this.size) return;
        thread = this.spawn();
      }
      const pending = this.queue.shift()!;
      thread.task = pending;
      thread.worker.postMessage(pending.message);
    }
  }

  private spawn(): PoolThread {
    const thread: PoolThread = { worker: startWorker(this.role, undefined), task: undefined };
    this.threads.push(thread);
    thread.worker.on("message", (message: ResultMessage) => {
      const pending = thread.task;
      if (pending === undefined || pending.message.id !== message.id) return;
      thread.task = undefined;
      if (message.ok) {
        pending.resolve(message.output);
      } else {
        const error = new Error(message.message);
        if (message.stack !== undefined) error.stack = message.stack;
        pending.reject(error);
      }
      this.dispatch();
    });
    const fail = (error: Error) => {
      const index = this.threads.indexOf(thread);
      if (index === -1) return;
      this.threads.splice(index, 1);
      thread.task?.reject(error);
      thread.task = undefined;
      if (!this.closed) this.dispatch();
    };
    thread.worker.on("error", (error) => fail(new Error(`worker thread failed: ${error.message}`, { cause: error })));
    thread.worker.on("exit", (code) => fail(new Error(`worker thread exited with code ${code}`)));
    return thread;
  }
}

/** The buffers of a task's output to move to the main thread instead of copying them (large typed arrays). */
export type TransferList = (task: string, output: unknown) => ArrayBuffer[];

/**
 * The worker's side of the pool: answers every task message with its handler's result.
 * Handlers run one at a time, in the order the tasks arrive.
 */
export function serveTasks(handlers: Readonly<Record<string, (input: never) => unknown>>, transferList?: TransferList): void {
  const port = parentPort;
  if (port === null) throw new Error("serveTasks: not in a worker thread");
  let chain = Promise.resolve();
  port.on("message", (message: TaskMessage) => {
    chain = chain.then(async () => {
      let reply: ResultMessage;
      try {
        const handler = handlers[message.task];
        if (handler === undefined) throw new Error(`unknown task "${message.task}"`);
        reply = { id: message.id, ok: true, output: await handler(message.input as never) };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        reply = { id: message.id, ok: false, message: failure.message, stack: failure.stack };
      }
      port.postMessage(reply, reply.ok && transferList !== undefined ? transferList(message.task, reply.output) : []);
    });
  });
}

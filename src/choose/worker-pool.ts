import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort, Worker } from "node:worker_threads";

/*
 * A minimal pool of worker threads behind a small interface, so that a project-wide pool can
 * replace it. Results come back by index: the output does not depend on how many workers
 * ran the jobs or in which order they finished.
 */

export interface JobRunner<In, Out> {
  /** Runs every job; `onDone` is called as each finishes (in any order); the result is in input order. */
  run(inputs: readonly In[], onDone?: (index: number, output: Out) => void): Promise<Out[]>;
  /** Stops the workers. */
  close(): Promise<void>;
}

interface Request<In> {
  readonly id: number;
  readonly input: In;
}

type Reply<Out> = { readonly id: number; readonly output: Out } | { readonly id: number; readonly error: string };

/** Runs jobs in this thread: for tests, and where threads would cost more than they save. */
export function inlineRunner<In, Out>(handler: (input: In) => Out): JobRunner<In, Out> {
  return {
    run: async (inputs, onDone) =>
      inputs.map((input, index) => {
        const output = handler(input);
        onDone?.(index, output);
        return output;
      }),
    close: async () => {},
  };
}

/**
 * Runs jobs on `size` worker threads, each loading `workerModule` (which calls `serveJobs`).
 * A job that throws rejects the run with its message; the workers are stopped by close().
 */
export function threadRunner<In, Out>(workerModule: URL, size: number): JobRunner<In, Out> {
  const workers = Array.from({ length: Math.max(1, size) }, () => startWorker(workerModule));
  let closed = false;
  return {
    run(inputs, onDone) {
      return new Promise<Out[]>((resolveRun, rejectRun) => {
        const outputs = new Array<Out>(inputs.length);
        let next = 0;
        let finished = 0;
        let failed = false;
        if (inputs.length === 0) {
          resolveRun(outputs);
          return;
        }
        const cleanups: (() => void)[] = [];
        const fail = (error: Error) => {
          if (failed) return;
          failed = true;
          for (const cleanup of cleanups) cleanup();
          rejectRun(error);
        };
        const feed = (worker: Worker) => {
          if (failed || next >= inputs.length) return;
          const id = next++;
          worker.postMessage({ id, input: inputs[id]! } satisfies Request<In>);
        };
        for (const worker of workers) {
          const onMessage = (reply: Reply<Out>) => {
            if (failed) return;
            if ("error" in reply) {
              fail(new Error(`job ${reply.id} failed: ${reply.error}`));
              return;
            }
            outputs[reply.id] = reply.output;
            onDone?.(reply.id, reply.output);
            finished++;
            if (finished === inputs.length) {
              for (const cleanup of cleanups) cleanup();
              resolveRun(outputs);
            } else {
              feed(worker);
            }
          };
          const onError = (error: Error) => fail(new Error(`a worker thread failed: ${error.message}`));
          const onExit = (code: number) => {
            if (!closed) fail(new Error(`a worker thread exited (code ${code})`));
          };
          worker.on("message", onMessage);
          worker.on("error", onError);
          worker.on("exit", onExit);
          cleanups.push(() => {
            worker.off("message", onMessage);
            worker.off("error", onError);
            worker.off("exit", onExit);
          });
          feed(worker);
        }
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

/** Called by a worker module: answers each job with `handler`'s result. */
export function serveJobs<In, Out>(handler: (input: In) => Out, transfer?: (output: Out) => ArrayBuffer[]): void {
  const port = parentPort;
  if (port === null) throw new Error("serveJobs must run in a worker thread");
  port.on("message", (request: Request<In>) => {
    let reply: Reply<Out>;
    try {
      reply = { id: request.id, output: handler(request.input) };
    } catch (error) {
      reply = { id: request.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
    port.postMessage(reply, "output" in reply && transfer !== undefined ? transfer(reply.output) : []);
  });
}

/**
 * Compiled JavaScript starts as it is. TypeScript sources (run through tsx, or under the test
 * runner) are loaded with tsx's tsImport: Node 20 does not pass module hooks to workers.
 */
function startWorker(workerModule: URL): Worker {
  if (!workerModule.pathname.endsWith(".ts")) return new Worker(workerModule);
  const code = `import(${JSON.stringify(tsxApiUrl())}).then((tsx) => tsx.tsImport(${JSON.stringify(workerModule.href)}, ${JSON.stringify(import.meta.url)}));`;
  return new Worker(code, { eval: true });
}

let tsxApi: string | undefined;

/** tsx's ES module API (`tsx/esm/api`, import condition), found through its package.json. */
function tsxApiUrl(): string {
  if (tsxApi !== undefined) return tsxApi;
  const packageJson = createRequire(import.meta.url).resolve("tsx/package.json");
  const manifest = JSON.parse(readFileSync(packageJson, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  tsxApi = pathToFileURL(join(dirname(packageJson), manifest.exports["./esm/api"]!.import.default)).href;
  return tsxApi;
}

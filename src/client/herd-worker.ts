import { parentPort, type Worker } from "node:worker_threads";
import { decodeLatencyHistogram, encodeLatencyHistogram } from "../model/latency-histogram.ts";
import { startWorker } from "../runtime/worker-pool.ts";
import { type HerdShare, localShare, type ShareFinal, type ShareWindow } from "./herd-share.ts";
import { type ClientFlagValues, resolveClientOptions } from "../options/client.ts";
import type { UserRange } from "./shard.ts";

/*
 * A share of the client's herd in a worker thread. The main thread sends the flag values
 * (the worker resolves them itself: policies and budgets are not cloneable), the users and
 * the seed; then start, a close at every grid point, finish, end. Histograms cross as
 * HdrHistogram's compressed encoding.
 */

export interface HerdWorkerData {
  readonly values: ClientFlagValues;
  readonly range: UserRange;
  readonly seed: number;
}

type Command =
  | { readonly type: "start"; readonly stopAtEpochMs: number | undefined }
  | { readonly type: "close" | "finish" | "end"; readonly id: number };

interface WireWindow {
  readonly counts: ShareWindow["counts"];
  readonly histogram: string | null;
  readonly maxLatencyMs: number | undefined;
  readonly latenessHistogram: string | null;
  readonly maxLatenessMs: number | undefined;
  readonly eventLoopDelay: ShareWindow["eventLoopDelay"];
  readonly inFlight: number;
  readonly openLoop: ShareWindow["openLoop"];
}

type Reply =
  | { readonly type: "ready" }
  | { readonly type: "window"; readonly id: number; readonly window: WireWindow }
  | { readonly type: "final"; readonly id: number; readonly window: WireWindow; readonly totals: WireWindow }
  | { readonly type: "ended"; readonly id: number };

const toWire = (window: ShareWindow): WireWindow => ({
  counts: window.counts,
  histogram: window.histogram === undefined ? null : encodeLatencyHistogram(window.histogram),
  maxLatencyMs: window.maxLatencyMs,
  latenessHistogram: window.latenessHistogram === undefined ? null : encodeLatencyHistogram(window.latenessHistogram),
  maxLatenessMs: window.maxLatenessMs,
  eventLoopDelay: window.eventLoopDelay,
  inFlight: window.inFlight,
  openLoop: window.openLoop,
});

const fromWire = (window: WireWindow): ShareWindow => ({
  counts: window.counts,
  histogram: window.histogram === null ? undefined : decodeLatencyHistogram(window.histogram),
  maxLatencyMs: window.maxLatencyMs,
  latenessHistogram: window.latenessHistogram === null ? undefined : decodeLatencyHistogram(window.latenessHistogram),
  maxLatenessMs: window.maxLatenessMs,
  eventLoopDelay: window.eventLoopDelay,
  inFlight: window.inFlight,
  openLoop: window.openLoop,
});

/** The worker thread's side. */
export function runWorker(data: HerdWorkerData): void {
  const port = parentPort!;
  const share = localShare(resolveClientOptions(data.values), data.range, data.seed);
  const reply = (message: Reply) => port.postMessage(message);
  port.on("message", (command: Command) => {
    void (async () => {
      switch (command.type) {
        case "start":
          share.start(command.stopAtEpochMs);
          return;
        case "close":
          reply({ type: "window", id: command.id, window: toWire(await share.closeWindow()) });
          return;
        case "finish": {
          const final = await share.finish();
          reply({ type: "final", id: command.id, window: toWire(final.window), totals: toWire(final.totals) });
          return;
        }
        case "end":
          await share.close();
          reply({ type: "ended", id: command.id });
          port.close();
          return;
      }
    })();
  });
  reply({ type: "ready" });
}

/**
 * The main thread's handle on a share in a worker thread; resolves once the worker is
 * ready. A worker that fails rejects whatever is waiting for it, naming the worker.
 */
export function workerShare(data: HerdWorkerData, name: string): Promise<HerdShare> {
  const worker: Worker = startWorker("client-herd", data);
  const waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let failure: Error | undefined;
  let ended = false;
  return new Promise<HerdShare>((resolveReady, rejectReady) => {
    const fail = (error: Error) => {
      failure ??= error;
      rejectReady(failure);
      for (const pending of waiting.values()) pending.reject(failure);
      waiting.clear();
    };
    worker.on("error", (error) => fail(new Error(`${name} failed: ${error.message}`, { cause: error })));
    worker.on("exit", (code) => {
      if (!ended) fail(new Error(`${name} exited with code ${code}`));
    });
    const ask = (type: "close" | "finish" | "end"): Promise<Reply> => {
      if (failure !== undefined) return Promise.reject(failure);
      const id = nextId++;
      return new Promise<Reply>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ type, id } satisfies Command);
      });
    };
    worker.on("message", (message: Reply) => {
      if (message.type === "ready") {
        resolveReady(share);
        return;
      }
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      pending?.resolve(message);
    });
    const share: HerdShare = {
      start: (stopAtEpochMs) => worker.postMessage({ type: "start", stopAtEpochMs } satisfies Command),
      closeWindow: async () => {
        const message = await ask("close");
        if (message.type !== "window") throw new Error(`${name}: unexpected reply ${message.type}`);
        return fromWire(message.window);
      },
      finish: async (): Promise<ShareFinal> => {
        const message = await ask("finish");
        if (message.type !== "final") throw new Error(`${name}: unexpected reply ${message.type}`);
        return { window: fromWire(message.window), totals: fromWire(message.totals) };
      },
      close: async () => {
        ended = true;
        // Its connections close with it; do not let a slow teardown hold the exit.
        await Promise.race([ask("end").catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 500).unref())]);
        await worker.terminate();
      },
    };
  });
}

import type { WatchedService } from "../model/verdict.ts";
import { pause } from "./back-to-baseline.ts";
import { exchangeOnce } from "./one-request.ts";

/** The watcher's settings: an answer at baseline comes within boundMs; a request gives up after timeoutMs; one every intervalMs. */
export interface WatchPlan {
  readonly boundMs: number;
  readonly timeoutMs: number;
  readonly intervalMs: number;
}

/** A body longer than this is not the service's usual answer: an error, read no further. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A service the experiment does not run reports nothing: the watcher asks it, one request at a
 * time on a new connection of its own, every `intervalMs` (a small share of a saturated service's
 * capacity), and notes whether each answer came at baseline. Its answers stand for the reports
 * of ./server in the verdict (src/model/verdict.ts, WatchedService).
 */
export class Watcher {
  private readonly answers: WatchedService["answers"][number][] = [];
  private readonly controller = new AbortController();
  private readonly done: Promise<void>;
  private readonly plan: WatchPlan;

  /** Starts watching `url`; answers are timed in ms from `originEpochMs`. */
  constructor(url: URL, plan: WatchPlan, originEpochMs: number) {
    this.plan = plan;
    this.done = this.watch(url, originEpochMs);
  }

  /** Stops watching (a request in flight is dropped, not counted) and returns what it saw. */
  async stop(): Promise<WatchedService> {
    this.controller.abort();
    await this.done;
    return { answers: this.answers, boundMs: this.plan.boundMs };
  }

  private async watch(url: URL, originEpochMs: number): Promise<void> {
    const stop = this.controller.signal;
    const now = () => Date.now();
    while (!stop.aborted) {
      const exchange = await exchangeOnce(url, { timeoutMs: this.plan.timeoutMs, maxBodyBytes: MAX_BODY_BYTES }, now, stop);
      if (stop.aborted) return;
      const atBaseline = exchange.fate === "served" && exchange.endedAt - exchange.sentAt <= this.plan.boundMs;
      // How long it took and what became of it: the evidence behind each answer, kept in <strategy>.watcher.jsonl.
      const latencyMs = Math.round(exchange.endedAt - exchange.sentAt);
      this.answers.push({ atMs: exchange.sentAt - originEpochMs, atBaseline, latencyMs, fate: exchange.fate });
      await pause(this.plan.intervalMs, stop);
    }
  }
}

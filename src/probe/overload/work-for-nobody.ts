import { setMaxListeners } from "node:events";
import { exchangeOnce, type ExchangePlan } from "../../runtime/one-request.ts";
import { type Baseline, baselineBoundMs } from "../../runtime/back-to-baseline.ts";

export interface AbandonPlan extends ExchangePlan {
  /** Requests sent at once, each on its own connection. */
  readonly burst: number;
  /** The service's measured capacity, req/s: how fast it works through what it holds. */
  readonly capacityPerSec: number;
  /** The longest the canary waits for its answer. */
  readonly maxCanaryMs: number;
}

export interface AbandonedWork {
  readonly sent: number;
  /** Of them, connected and unanswered when their clients left: work the service held. */
  readonly waiting: number;
  /** Of them, never connected before they were given up: their SYNs dropped (a full accept queue). */
  readonly neverConnected: number;
  readonly abandonAfterMs: number;
  /** How long a request sent right after waited beyond the baseline once connected, ms; undefined when it got no answer. */
  readonly canaryWaitMs: number | undefined;
  /** What it would wait if the service served every request left behind (first come, first served). */
  readonly waitIfServedMs: number;
  /**
   * canaryWaitMs ÷ waitIfServedMs, from 0 (the service dropped what its clients left) to 1 (it
   * served it all: work for nobody); undefined where it cannot be told (`untellable`), or no answer came.
   */
  readonly servedShare: number | undefined;
  /** Why the share cannot be told: too little waited, or the accept queue was full (the canary's own connect waited). */
  readonly untellable?: "few" | "full";
}

/**
 * Whether a service serves requests whose client has gone (docs/probe.md, "Past saturation"):
 * a burst, each request given up once the service holds most of them; then one request, the
 * canary, whose wait tells whether the abandoned work stood in front of it. A closed connection
 * does not tell a server that has not read its request yet; most read it, run the handler and
 * write to a closed socket.
 */
export async function measureWorkForNobody(
  url: URL,
  plan: AbandonPlan,
  baseline: Baseline,
  now: () => number,
  stop: AbortSignal,
): Promise<AbandonedWork> {
  setMaxListeners(0, stop);
  const abandonAfterMs = Math.max(baselineBoundMs(baseline), MIN_ABANDON_MS);
  const burst = await Promise.all(Array.from({ length: plan.burst }, () => exchangeOnce(url, plan, now, stop, abandonAfterMs)));
  const waiting = burst.filter((exchange) => exchange.fate === "timeout").length;
  const waitIfServedMs = (1000 * waiting) / plan.capacityPerSec;
  // Connect timeouts only: a refused connection says nothing of a full accept queue.
  const neverConnected = burst.filter((exchange) => exchange.fate === "connect-timeout").length;
  const canary = await exchangeOnce(url, { ...plan, timeoutMs: plan.maxCanaryMs }, now, stop);
  const canaryWaitMs = canary.fate === "served" ? Math.max(0, canary.endedAt - canary.sentAt - baseline.p50Ms) : undefined;
  // A burst some of which never connected filled the accept queue: the canary's SYN waits for a retransmit (1 s, then 3 s)
  // as much as for the work ahead of it, so its wait tells neither.
  const untellable = neverConnected > 0 ? "full" : waitIfServedMs < TELLABLE_BOUNDS * baselineBoundMs(baseline) ? "few" : undefined;
  return {
    sent: plan.burst,
    waiting,
    neverConnected,
    abandonAfterMs,
    canaryWaitMs,
    waitIfServedMs,
    servedShare: canaryWaitMs === undefined || untellable !== undefined ? undefined : Math.min(1, canaryWaitMs / waitIfServedMs),
    ...(untellable === undefined ? {} : { untellable }),
  };
}

/** The burst's connections all come up within this on loopback and a near network. */
const MIN_ABANDON_MS = 100;

/** The wait for the abandoned work must be this many times the baseline's bound to tell it from a slow answer. */
const TELLABLE_BOUNDS = 3;

/** A share served at or above this: the service works for clients that have gone. */
export const WORK_FOR_NOBODY_SHARE = 0.5;

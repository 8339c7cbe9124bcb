import { exchangeOnce, type ExchangePlan } from "./one-request.ts";

/** The requests the phase past saturation may still send (-max-requests, -overload-max-requests): each part takes from it. */
export interface RequestAllowance {
  left: number;
}

/** The service's latency at rest: the probe's lowest step. */
export interface Baseline {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Answers in a row at baseline that make a service back: one could be a lucky gap in a queue. */
export const BACK_IN_A_ROW = 3;

/** An answer at baseline: served, within twice the baseline's p50 or its p99, whichever is larger. */
export const baselineBoundMs = (baseline: Baseline) => Math.max(2 * baseline.p50Ms, baseline.p99Ms);

export interface Recovery {
  /** Ms from `fromAt` to the send of the first of BACK_IN_A_ROW answers at baseline; undefined when not back (notBackBy says why). */
  readonly backAfterMs: number | undefined;
  readonly requests: number;
  /** Why it was not back: the wait ran out, or the requests, or the probe was stopped. */
  readonly notBackBy?: "wait" | "requests" | "stopped";
}

/**
 * Light load, one request at a time on a new connection each, until BACK_IN_A_ROW answers in a
 * row come at baseline, or until `maxWaitMs` after `fromAt` or the allowance is spent: how long the service takes to return after
 * an overload ended at `fromAt`. One user is a small share of a saturated service's capacity.
 */
export async function timeToBaseline(
  url: URL,
  baseline: Baseline,
  fromAt: number,
  plan: ExchangePlan & { readonly maxWaitMs: number },
  allowance: RequestAllowance,
  now: () => number,
  stop: AbortSignal,
): Promise<Recovery> {
  const bound = baselineBoundMs(baseline);
  let inARow = 0;
  let firstAt = 0;
  let requests = 0;
  while (!stop.aborted && now() - fromAt < plan.maxWaitMs && allowance.left > 0) {
    allowance.left--;
    const exchange = await exchangeOnce(url, plan, now, stop);
    requests++;
    const atBaseline = exchange.fate === "served" && exchange.endedAt - exchange.sentAt <= bound;
    if (!atBaseline) {
      inARow = 0;
      // A refused or reset connection answers at once: a pause keeps the light load light.
      if (exchange.endedAt - exchange.sentAt < baseline.p50Ms) await pause(baseline.p50Ms, stop);
      continue;
    }
    if (inARow++ === 0) firstAt = exchange.sentAt;
    if (inARow === BACK_IN_A_ROW) return { backAfterMs: Math.max(0, firstAt - fromAt), requests };
  }
  return { backAfterMs: undefined, requests, notBackBy: stop.aborted ? "stopped" : allowance.left <= 0 ? "requests" : "wait" };
}

/** Waits `ms`, or less when `stop` fires; its listener removed either way. */
export function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop.removeEventListener("abort", done);
      resolve();
    }
    stop.addEventListener("abort", done, { once: true });
  });
}

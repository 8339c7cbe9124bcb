import { setMaxListeners } from "node:events";
import { type Exchange, exchangeOnce, type ExchangePlan } from "../../runtime/one-request.ts";

/** The overload phase's arrivals: `requests` GETs, evenly spaced at `ratePerSec`, whatever the answers. */
export interface OverloadPlan extends ExchangePlan {
  readonly ratePerSec: number;
  readonly requests: number;
}

export interface OverloadRun {
  /** Resolves with the instant the last request was sent: the overload's end, where recovery is timed from. */
  readonly lastSent: Promise<number>;
  /** Resolves once every request has its fate. */
  readonly finished: Promise<OverloadRecord>;
}

export interface OverloadRecord {
  readonly plan: OverloadPlan;
  readonly startedAt: number;
  readonly lastSentAt: number;
  readonly exchanges: readonly Exchange[];
  /** The most a send came after its instant in the schedule, ms: the probe's own delay, not the service's. */
  readonly maxLagMs: number;
}

/**
 * Open-loop arrivals past saturation: the i-th request goes at start + i ÷ rate, answered or not,
 * as a crowd of users arrives whatever the service does. Late timers send every request that is
 * due at once, so the count holds and the lag is recorded. `stop` ends it: nothing more is sent,
 * and what is in flight is given up.
 */
export function startOverload(url: URL, plan: OverloadPlan, now: () => number, stop: AbortSignal): OverloadRun {
  // Every request in flight listens to the stop.
  setMaxListeners(0, stop);
  const startedAt = now();
  const intervalMs = 1000 / plan.ratePerSec;
  const exchanges: Promise<Exchange>[] = [];
  let maxLagMs = 0;
  let resolveLastSent!: (at: number) => void;
  const lastSent = new Promise<number>((resolve) => (resolveLastSent = resolve));
  const sendDue = () => {
    const at = now();
    while (exchanges.length < plan.requests && startedAt + exchanges.length * intervalMs <= at && !stop.aborted) {
      maxLagMs = Math.max(maxLagMs, at - (startedAt + exchanges.length * intervalMs));
      exchanges.push(exchangeOnce(url, plan, now, stop));
    }
    if (exchanges.length >= plan.requests || stop.aborted) {
      resolveLastSent(now());
      return;
    }
    setTimeout(sendDue, Math.max(0, startedAt + exchanges.length * intervalMs - now()));
  };
  sendDue();
  const finished = lastSent.then(async (lastSentAt) => ({
    plan,
    startedAt,
    lastSentAt,
    exchanges: await Promise.all(exchanges),
    maxLagMs,
  }));
  return { lastSent, finished };
}

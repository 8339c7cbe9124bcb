import { type ServerModelFigures, sharedDelayFigures } from "./figures.ts";

/**
 * The linear server model, from Marc Brooker's collapse simulation (`simple_collapse_sim` in
 * https://github.com/mbrooker/simulator_example): every request in service takes
 *
 *   delay(c) = baseDelay + slope * c
 *
 * for the c requests in service at that instant (1 s + 10 ms × concurrency there). It shares
 * ServiceQueue with the exponential model: one delay for all, re-evaluated as c changes.
 */
export interface LinearLatency {
  readonly kind: "linear";
  /** The delay of a server with nothing else in service, less one slope, in ms. */
  readonly baseDelayMs: number;
  /** What each request in service adds to everyone's delay, in ms. */
  readonly slopeMs: number;
}

/** Brooker's slope: 10 ms per request in service. */
export const DEFAULT_SLOPE_MS = 10;

export function linearDelayMs(model: LinearLatency, concurrency: number): number {
  return model.baseDelayMs + model.slopeMs * concurrency;
}

/** The smallest concurrency whose delay reaches `delayMs`; Infinity when the delay never grows. */
export function linearConcurrencyForDelay(model: LinearLatency, delayMs: number): number {
  if (delayMs <= model.baseDelayMs) return 0;
  if (model.slopeMs <= 0) return Infinity;
  let concurrency = Math.ceil((delayMs - model.baseDelayMs) / model.slopeMs);
  // Correct a floating-point off-by-one in either direction.
  while (concurrency > 0 && linearDelayMs(model, concurrency - 1) >= delayMs) concurrency--;
  while (linearDelayMs(model, concurrency) < delayMs) concurrency++;
  return concurrency;
}

/**
 * Capacity and tipping point (see sharedDelayFigures). c ÷ (baseDelay + slope × c) only
 * rises, so the capacity is at the most requests in service whose delay is still below the
 * timeout: 199 ÷ 2.99 s = 66.6 req/s for Brooker's 1 s + 10 ms × c and 3 s timeout, between
 * his steady 40 req/s and his spike to 80. The verdict calls the server back once its delay
 * is below the timeout again (at most the tipping point less one in service).
 */
export function linearFigures(latency: LinearLatency, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  const tipping = linearConcurrencyForDelay(latency, timeoutMs);
  const delayMs = (concurrency: number) => linearDelayMs(latency, concurrency);
  return sharedDelayFigures(delayMs, tipping, maxConcurrency, Infinity, Math.max(0, tipping - 1));
}

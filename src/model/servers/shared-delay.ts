import { concurrencyForDelay, type DelayCurve, modelledDelayMs } from "../latency.ts";
import type { ServerModelFigures } from "./server-model.ts";

/**
 * Capacity and tipping point of a model whose requests in service share one delay(c)
 * (ServiceQueue): by Little's law c requests in service complete at c ÷ delay(c) per second.
 * Capacity is the most of that over the concurrencies whose delay stays below the client
 * timeout (and at or under the shedding limit): above them every answer comes too late.
 * The tipping point is the concurrency at which the delay reaches the timeout, unless
 * shedding stops the server short of it. `throughputPeaksAt` is where c ÷ delay(c) peaks
 * (it rises up to there and falls after it); Infinity where it only rises.
 */
export function sharedDelayFigures(
  curve: DelayCurve,
  timeoutMs: number,
  maxConcurrency: number,
  throughputPeaksAt: number,
  overloadAbove: number,
): ServerModelFigures {
  const tipping = concurrencyForDelay(curve, timeoutMs);
  const highest = Math.min(tipping - 1, maxConcurrency);
  const perSec = (concurrency: number) => concurrency / (modelledDelayMs(curve, concurrency) / 1000);
  let capacityPerSec = 0;
  let capacityAtConcurrency = 0;
  if (!Number.isFinite(highest)) {
    capacityPerSec = Infinity;
    capacityAtConcurrency = Infinity;
  } else {
    const clamp = (concurrency: number) => Math.min(highest, Math.max(1, concurrency));
    for (const concurrency of [clamp(Math.floor(throughputPeaksAt)), clamp(Math.ceil(throughputPeaksAt)), highest]) {
      if (concurrency < 1) continue;
      const rate = perSec(concurrency);
      if (rate > capacityPerSec) {
        capacityPerSec = rate;
        capacityAtConcurrency = concurrency;
      }
    }
  }
  const tippingConcurrency = Number.isFinite(tipping) && tipping <= maxConcurrency ? tipping : undefined;
  return { capacityPerSec, capacityAtConcurrency, tippingConcurrency, overloadAbove };
}

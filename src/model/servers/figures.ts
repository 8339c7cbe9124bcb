/**
 * What a model can take, for clients that give up after a timeout:
 * - capacity: the most requests per second it answers within the timeout, and the
 *   requests in the server at which it does;
 * - tipping point: the requests in the server at which a new request's time there reaches
 *   the timeout, undefined where the model has none. Beyond it, clients that give up and
 *   retry only add work the server still does for nobody: the metastable region;
 * - overloadAbove: the verdict's line (src/model/verdict.ts): above this many requests in
 *   the server it is not back (the exponential model's limit, the linear model's tipping
 *   point less one, the queue model's threads plus a short queue).
 */
export interface ServerModelFigures {
  readonly capacityPerSec: number;
  readonly capacityAtConcurrency: number;
  readonly tippingConcurrency: number | undefined;
  readonly overloadAbove: number;
}

/**
 * Capacity and tipping point of a model whose requests in service share one delay(c)
 * (ServiceQueue): by Little's law c requests in service complete at c ÷ delay(c) per second.
 * Capacity is the most of that over the concurrencies whose delay stays below the client
 * timeout (and at or under the shedding limit): above them every answer comes too late.
 * The tipping point is the concurrency at which the delay reaches the timeout, unless
 * shedding stops the server short of it. `throughputPeaksAt` is where c ÷ delay(c) peaks
 * (it rises up to there and falls after it); Infinity where it only rises. `tipping` is the
 * smallest concurrency whose delay reaches the timeout.
 */
export function sharedDelayFigures(
  delayMs: (concurrency: number) => number,
  tipping: number,
  maxConcurrency: number,
  throughputPeaksAt: number,
  overloadAbove: number,
): ServerModelFigures {
  const highest = Math.min(tipping - 1, maxConcurrency);
  const perSec = (concurrency: number) => concurrency / (delayMs(concurrency) / 1000);
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

import { concurrencyForDelay, type LatencyModel, modelledDelayMs } from "../latency.ts";
import { type ServerModelFigures, sharedDelayFigures } from "./figures.ts";

/**
 * The exponential model, the default: the article's server (src/model/latency.ts holds its
 * curve, ServiceQueue its requests). Its throughput c ÷ delay(c) rises up to the limit and
 * on above it up to c = K ÷ ln(factor), where the delay's growth overtakes the concurrency's;
 * its capacity is the most of that within the client timeout. The verdict reads its limit,
 * as the article does: the server is back once it is under the limit again.
 */
export function exponentialFigures(latency: LatencyModel, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  const peaksAt = latency.factor > 1 ? Math.max(latency.limit, latency.exponentDivisor / Math.log(latency.factor)) : Infinity;
  const delayMs = (concurrency: number) => modelledDelayMs(latency, concurrency);
  return sharedDelayFigures(delayMs, concurrencyForDelay(latency, timeoutMs), maxConcurrency, peaksAt, latency.limit);
}

import { modelledDelayMs } from "../../model/latency.ts";
import { linearDelayMs } from "../../model/servers/linear.ts";
import type { ServerModelSpec } from "../../model/servers/models.ts";

/**
 * A server model's mean latency under a closed loop of `concurrency` users with no think
 * time: every user's request is in the server at every moment, so the server holds
 * `concurrency` requests.
 * - queue: `threads` serve at once, the rest wait; each waits its turn in rounds of one
 *   service time, so the mean is serviceTime × max(1, concurrency ÷ threads) whatever the
 *   distribution of service times (the machine-repairman model with no think time);
 * - linear and exponential: every request in service takes the model's shared delay at
 *   that concurrency.
 */
export function closedLoopLatencyMs(spec: ServerModelSpec, concurrency: number): number {
  switch (spec.kind) {
    case "queue":
      return spec.pool.serviceTimeMs * Math.max(1, concurrency / spec.pool.threads);
    case "linear":
      return linearDelayMs(spec.latency, concurrency);
    case "exponential":
      return modelledDelayMs(spec.latency, concurrency);
  }
}

/** Requests per second answered by `concurrency` users who each wait for their answer (Little's law). */
export function closedLoopThroughputPerSec(spec: ServerModelSpec, concurrency: number): number {
  return (concurrency * 1000) / closedLoopLatencyMs(spec, concurrency);
}

import { modelledDelayMs } from "../../model/latency.ts";
import { linearDelayMs } from "../../model/servers/linear.ts";
import type { ServerModelSpec } from "../../model/servers/models.ts";

/**
 * A server model's mean latency under a closed loop of `concurrency` users with no think
 * time: every user's request is in the server at every moment, so the server holds
 * `concurrency` requests.
 * - queue: `threads` serve at once, the rest wait. Each request also spends `overheadMs`
 *   outside the threads (the network, the client, a connection's set-up), during which it
 *   holds no thread: the pool is saturated once concurrency × serviceTime reaches
 *   threads × (serviceTime + overhead). Below that a request takes serviceTime + overhead;
 *   above it the pool answers threads ÷ serviceTime per second, so a request takes
 *   concurrency × serviceTime ÷ threads (Little's law): the asymptotic bounds of a closed
 *   queueing network, exact for constant times;
 * - linear and exponential: every request in service takes the model's shared delay at
 *   that concurrency, plus the overhead.
 */
export function closedLoopLatencyMs(spec: ServerModelSpec, concurrency: number, overheadMs = 0): number {
  switch (spec.kind) {
    case "queue": {
      const { serviceTimeMs, threads } = spec.pool;
      return Math.max(serviceTimeMs + overheadMs, (concurrency * serviceTimeMs) / threads);
    }
    case "linear":
      return linearDelayMs(spec.latency, concurrency) + overheadMs;
    case "exponential":
      return modelledDelayMs(spec.latency, concurrency) + overheadMs;
  }
}

/** Requests per second answered by `concurrency` users who each wait for their answer (Little's law). */
export function closedLoopThroughputPerSec(spec: ServerModelSpec, concurrency: number, overheadMs = 0): number {
  return (concurrency * 1000) / closedLoopLatencyMs(spec, concurrency, overheadMs);
}

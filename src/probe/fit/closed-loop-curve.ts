import { modelOf, type ServerModelSpec } from "../../model/servers/models.ts";

/**
 * A server model's mean latency under a closed loop of `concurrency` users with no think
 * time: every user's request is in the server at every moment, so the server holds
 * `concurrency` requests. Each model states its own (its closedLoopLatencyMs): a queue's
 * threads bound it, a shared delay is the curve's at that concurrency; `overheadMs` is the
 * time a request spends outside the service.
 */
export function closedLoopLatencyMs(spec: ServerModelSpec, concurrency: number, overheadMs = 0): number {
  return modelOf(spec).closedLoopLatencyMs(spec, concurrency, overheadMs);
}

/** Requests per second answered by `concurrency` users who each wait for their answer (Little's law). */
export function closedLoopThroughputPerSec(spec: ServerModelSpec, concurrency: number, overheadMs = 0): number {
  return (concurrency * 1000) / closedLoopLatencyMs(spec, concurrency, overheadMs);
}

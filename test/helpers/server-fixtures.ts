import type { ServiceSnapshot } from "../../src/model/service-queue.ts";
import type { ServerOptions } from "../../src/options/server.ts";

/** A server snapshot with nothing going on: 100 ms delay, every total 0. */
export const IDLE_SERVER: ServiceSnapshot = {
  concurrency: 0,
  lastDelayMs: 100,
  peakConcurrency: 0,
  peakDelayMs: 100,
  admitted: 0,
  served: 0,
  abandoned: 0,
  abandonedInService: 0,
  cancelled: 0,
  shed: 0,
  expired: 0,
  errorsInjected: 0,
};

/** An in-process server's options: the exponential model at a 50 ms base delay on a free loopback port, everything else off. */
export const TEST_SERVER_OPTIONS: ServerOptions = {
  latency: { baseDelayMs: 50, limit: 30, factor: 1.05, exponentDivisor: 15 },
  listen: { host: "127.0.0.1", port: 0 },
  backlog: 511,
  cancelOnDisconnect: false,
  maxConcurrency: Infinity,
  retryAfterMs: 1000,
  shedWith: "503",
  deadlineAware: false,
  errorRate: 0,
  seed: undefined,
  reportIntervalMs: 1000,
  json: false,
  metrics: false,
  headersTimeoutMs: 10_000,
};

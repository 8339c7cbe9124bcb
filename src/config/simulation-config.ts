import type { RetryConfig } from "../model/client-loop.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { LatencyModel } from "../model/latency.ts";
import type { Arrivals } from "../model/load.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";

/*
 * What one simulated run is: the users, their policy, the server, the faults, the run. The
 * runner plays it (src/runner/simulate.ts); the flags describe it (simulation.ts); choose's
 * candidates, the demo's prediction and -validate's runs are made of it.
 */

/** A stop of the server: from `atMs` for `durationMs`. */
export interface Outage {
  readonly atMs: number;
  readonly durationMs: number;
}

/** Server-side protections and client-side signalling of the fleet, all off by default. */
export interface ProtectionConfig {
  /** Retry-After on a shed request, ms (whole seconds); 0 for none. */
  readonly retryAfterMs: number;
  /** Clients send their deadlines and the server takes requests out of service when they pass. */
  readonly deadlines: boolean;
  /** Fraction of requests the server answers 500 after the modelled delay. */
  readonly errorRate: number;
  /** A shed request is dropped unanswered (-shed-with drop) rather than answered 503. */
  readonly dropShed?: boolean;
}

export const NO_PROTECTION: ProtectionConfig = Object.freeze({ retryAfterMs: 0, deadlines: false, errorRate: 0 });

export interface SimulationConfig {
  readonly users: number;
  /** Closed users (the default) or open-loop arrivals. */
  readonly arrivals?: Arrivals | undefined;
  readonly protection?: ProtectionConfig | undefined;
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
  /** The client's reporting window. */
  readonly intervalMs: number;
  /** The exponential model's curve: the server model when `model` is absent. */
  readonly latency: LatencyModel;
  /** The server model (src/model/servers); the exponential one with `latency` when absent. */
  readonly model?: ServerModelSpec | undefined;
  readonly cancelOnDisconnect: boolean;
  readonly maxConcurrency: number;
  /** Requests in service the server's memory holds; at one more it runs out of memory and the run ends. */
  readonly maxInService: number;
  readonly backlog: number;
  /** The server's report interval. */
  readonly reportIntervalMs: number;
  readonly outages: readonly Outage[];
  /**
   * Faults of the other kinds (src/model/faults: crash, capacity, slow, errors, spike); the
   * stops of a schedule are `outages`.
   */
  readonly faults?: readonly Fault[] | undefined;
  readonly durationMs: number;
  readonly seed: number;
}

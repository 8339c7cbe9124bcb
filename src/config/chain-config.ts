import type { RetryConfig } from "../model/client-loop.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { Arrivals } from "../model/load.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";

/*
 * A chain of tiers as a typed configuration: the users, each tier's server and protections, and
 * each caller's policy toward the tier below. Scenario files' `tiers:` and choose's and check's
 * chain candidates produce it; the runner's chain (src/runner/chain.ts) runs it.
 */

/** A caller's policy toward the tier below it: the tier's `upstream` (src/config/load.ts resolveRetryPolicy). */
export interface UpstreamPolicy {
  readonly timeoutMs: number;
  readonly propagateDeadline: boolean;
  readonly retry: RetryConfig;
}

/** One tier of a simulated chain: its server model and protections, and its policy toward the next tier. */
export interface ChainTierConfig {
  readonly name: string;
  /** A tier that calls another is a queue model (its threads held during the call). */
  readonly model: ServerModelSpec;
  readonly cancelOnDisconnect: boolean;
  readonly maxConcurrency: number;
  readonly maxInService: number;
  readonly backlog: number;
  readonly errorRate: number;
  readonly retryAfterMs: number;
  readonly dropShed: boolean;
  readonly deadlineAware: boolean;
  /** Undefined for the bottom tier. */
  readonly upstream: UpstreamPolicy | undefined;
  /** Calls to the next tier per request. */
  readonly fanout: number;
  /** The faults that strike this tier (stops included; spikes are the users'). */
  readonly faults: readonly Fault[];
}

/** A chain on the simulator's clock: the users, the tiers from the edge down, and the users' spikes. */
export interface ChainConfig {
  readonly users: number;
  readonly arrivals?: Arrivals | undefined;
  readonly timeoutMs: number;
  readonly propagateDeadline: boolean;
  readonly retry: RetryConfig;
  readonly tiers: readonly ChainTierConfig[];
  /** The users' spikes (spike faults of the edge). */
  readonly spikes: readonly Fault[];
  readonly intervalMs: number;
  readonly durationMs: number;
  readonly seed: number;
}

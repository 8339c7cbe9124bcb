import type { Random } from "../backoff/random.ts";
import type { Clock } from "../clock/clock.ts";
import { createHttpTransport, type HttpTransport } from "../runner/attempt.ts";
import { describeStrategy } from "../config/load.ts";
import { type CommonServerOptions, middleTierOf, type ServerModelSpec } from "../model/servers/models.ts";
import type { UpstreamPool } from "../model/servers/upstream-pool.ts";
import { UpstreamCalls } from "../model/upstream-calls.ts";
import { formatDuration } from "../cli/duration.ts";
import { redactUrl } from "../cli/redact-url.ts";
import type { UpstreamOptions } from "../options/upstream.ts";

/** How many times its -threads a middle tier's budget keeps per-call state for (a capacity fault above 1 adds threads). */
const THREADS_HEADROOM = 64;

/** A real middle tier's model and the HTTP clients its calls go through. */
export interface UpstreamTier {
  readonly pool: UpstreamPool;
  /** Destroys the clients' connections (after the pool has stopped, which aborts every call). */
  close(): Promise<void>;
}

/**
 * The model of a middle tier (./server -upstream): the model's pool (the queue's), whose requests
 * make their upstream calls through the client's own HTTP transport (undici), one per
 * upstream URL, with the tier's policy. `carriedDeadline` gives the deadline (epoch ms) a
 * request brought, to carry down. Undefined for a model that cannot be a middle tier.
 */
export function createUpstreamTier(
  upstream: UpstreamOptions,
  spec: ServerModelSpec,
  clock: Clock,
  options: CommonServerOptions,
  random: Random,
  carriedDeadline: (context: unknown) => number | undefined,
): UpstreamTier | undefined {
  const tier = middleTierOf(spec);
  if (tier === undefined) return undefined;
  const { policy } = upstream;
  const transports = new Map<string, HttpTransport>();
  const transportOf = (url: string) => {
    let transport = transports.get(url);
    if (transport === undefined) {
      transport = createHttpTransport(url, policy.timeoutMs, {
        propagateDeadline: policy.propagateDeadline,
        carryDeadlines: true,
        maxBodyBytes: upstream.maxBodyBytes,
      });
      transports.set(url, transport);
    }
    return transport;
  };
  const calls = new UpstreamCalls(clock, random, {
    timeoutMs: policy.timeoutMs,
    retry: policy.retry,
    targets: upstream.targets.map(transportOf),
    // Calls run only in threads; a capacity fault may add threads, never this many.
    maxCalls: Math.min(options.maxInService ?? Infinity, tier.threads(spec) * THREADS_HEADROOM),
    carriedDeadline,
  });
  const pool = tier.create(spec, clock, options, calls);
  calls.reportTo(pool);
  return {
    pool,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
    },
  };
}

/** One line for the start-up: whom the tier calls and how, e.g. `calls http://…/api (×2) with fixed (…), max attempts 3, timeout 1s`. */
export function describeUpstream(upstream: UpstreamOptions): string {
  const counts = new Map<string, number>();
  for (const shown of upstream.targets.map(redactUrl)) counts.set(shown, (counts.get(shown) ?? 0) + 1);
  const targets = [...counts].map(([url, count]) => (count === 1 ? url : `${url} (×${count})`)).join(", ");
  const { policy } = upstream;
  const deadline = policy.propagateDeadline ? ", sending its deadline" : "";
  return `calls ${targets} with ${describeStrategy({ ...policy, clients: 1 })}, timeout ${formatDuration(policy.timeoutMs)}${deadline}`;
}

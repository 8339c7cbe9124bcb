import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { retryBudget } from "../../../src/backoff/budget.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { clientMetrics } from "../../../src/client/metrics.ts";
import { ServiceQueue } from "../../../src/model/service-queue.ts";
import { DEFAULT_THREAD_POOL, ThreadPool } from "../../../src/model/servers/queue.ts";
import { UpstreamPool } from "../../../src/model/servers/upstream-pool.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { serverMetrics } from "../../../src/server/metrics.ts";
import { exponentialCurve } from "../../../src/model/servers/kinds/exponential.ts";
import { boundDelay } from "../../../src/model/servers/delay-models.ts";

/** The metric names in the first column of docs/metrics.md's tables, without their labels. */
function documentedNames(): Set<string> {
  const text = readFileSync(new URL("../../../docs/metrics.md", import.meta.url), "utf8");
  return new Set([...text.matchAll(/^\| `(thundering_herd_[a-z_]+)(?:\{[^}]*\})?`/gm)].map((match) => match[1]!));
}

/** Every series both programs can register, every optional one switched on. */
async function registeredNames(): Promise<Set<string>> {
  const client = clientMetrics({ users: 10, inFlight: () => 0, instances: () => undefined, budget: retryBudget() });
  const queue = new ServiceQueue(new ManualClock(), {
    delay: boundDelay(exponentialCurve, { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 }),
    cancelOnDisconnect: false,
    maxConcurrency: Infinity,
  });
  const server = serverMetrics(queue, 30, () => 0);
  // The queue model adds the series of its threads and queue.
  const pool = new ThreadPool(new ManualClock(), { ...DEFAULT_THREAD_POOL, cancelOnDisconnect: false, random: seededRandom(1) });
  // With the fault control on (-admin-listen), the fault gauge too.
  const poolServer = serverMetrics(
    pool,
    16,
    () => 0,
    () => [],
  );
  // A middle tier (-upstream) adds the series of its upstream calls.
  const upstreamPool = new UpstreamPool(
    new ManualClock(),
    { ...DEFAULT_THREAD_POOL, cancelOnDisconnect: false, random: seededRandom(1) },
    { startCall: () => {}, cancelCall: () => {} },
  );
  const upstreamServer = serverMetrics(upstreamPool, 16, () => 0);
  const names = new Set<string>();
  for (const registry of [client.registry, server.registry, poolServer.registry, upstreamServer.registry])
    for (const metric of await registry.getMetricsAsJSON())
      if (!metric.name.startsWith("process_") && !metric.name.startsWith("nodejs_")) names.add(metric.name);
  return names;
}

describe("docs/metrics.md", () => {
  it("lists exactly the series the server and the client export", async () => {
    const registered = await registeredNames();
    expect(registered.size).toBeGreaterThan(10);
    expect([...documentedNames()].sort()).toEqual([...registered].sort());
  });
});

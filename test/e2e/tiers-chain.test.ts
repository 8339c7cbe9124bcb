import { describe, expect, it } from "vitest";
import type { ServerLine } from "../../src/contracts/server-line.ts";
import { eventually } from "../helpers/eventually.ts";
import { windowsAndSummary } from "../helpers/output-lines.ts";
import { getJson } from "../helpers/raw-http.ts";
import { runTogether } from "../helpers/run-together.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

/*
 * A real chain of three ./server processes, edge → api → db, the db answering every request
 * 500, and a ./client in front: with three attempts at every layer and no budget, each user
 * request becomes 3 at the edge, 9 at the api and 27 at the db, exactly. Every process is
 * stopped by its process group after the test (spawn-cli's afterEach), also on failure.
 * The two chains (without and with a budget) run side by side: a few requests a second each,
 * and counts that are exact whatever the timing.
 */

const FAST = ["-model", "queue", "-threads", "16", "-service-time", "1ms", "-seed", "1"];
/** Every tier's own policy: three attempts, 1 ms apart. */
const THREE_ATTEMPTS = ["-upstream-max-attempts", "3", "-upstream-simple-backoff-delay", "1ms", "-upstream-timeout", "5s"];

async function startChain(tierPolicy: readonly string[]) {
  const db = await spawnServer([...FAST, "-error-rate", "1"]);
  const api = await spawnServer([...FAST, "-upstream", db.url, ...tierPolicy]);
  const edge = await spawnServer([...FAST, "-upstream", api.url, ...tierPolicy]);
  return { db, api, edge };
}

const stats = (tier: { port: number }) => getJson<ServerLine>(`http://127.0.0.1:${tier.port}/stats`);

/**
 * Runs the users: 500 of them thinking 100 s on average, so that in a 3 s run a few send one
 * request each (seed 7: 11 requests, the last 2.3 s into the run), each retried up to three
 * times 10 ms apart; then waits until every tier has finished with them. Returns the user
 * requests and every tier's totals.
 */
async function runUsers(chain: Awaited<ReturnType<typeof startChain>>) {
  const client = spawnCli("client", [
    ...["-url", chain.edge.url, "-clients", "500", "-lambda", "100", "-seed", "7"],
    ...["-max-attempts", "3", "-simple-backoff-delay", "10ms", "-timeout", "20s", "-duration", "3s", "-interval", "1s", "-json"],
  ]);
  expect(await client.exited).toBe(0);
  const { summary } = windowsAndSummary(client.stdoutLines);
  const userRequests = summary.attempts - summary.retries;
  // Every user request ran to its end (no chain was cut by the client's stop): the count is exact.
  expect(summary.gaveUp).toBe(userRequests);
  expect(summary.ok).toBe(0);
  expect(userRequests).toBeGreaterThanOrEqual(3);
  await eventually(async () => {
    const all = await Promise.all([stats(chain.edge), stats(chain.api), stats(chain.db)]);
    return all.every((line) => line.concurrency === 0);
  }, "every tier idle");
  const [edge, api, db] = await Promise.all([stats(chain.edge), stats(chain.api), stats(chain.db)]);
  return { summary, userRequests, edge: edge!, api: api!, db: db! };
}

describe("a real chain of middle tiers (./server -upstream)", () => {
  const runs = runTogether(
    {
      noBudget: async () => runUsers(await startChain(THREE_ATTEMPTS)),
      grpcBudget: async () => runUsers(await startChain([...THREE_ATTEMPTS, "-upstream-budget", "grpc"])),
    },
    { timeoutMs: 60_000 },
  );

  it("multiplies the attempts by three at each layer without a budget: 27 per user request at the db, exactly", () => {
    const { userRequests: users, edge, api, db } = runs("noBudget");
    expect(edge).toMatchObject({ admitted: 3 * users, upstream: { requests: 3 * users, attempts: 9 * users, failures: 3 * users } });
    expect(api).toMatchObject({ admitted: 9 * users, upstream: { requests: 9 * users, attempts: 27 * users, failures: 9 * users } });
    expect(db).toMatchObject({ admitted: 27 * users, errorsInjected: 27 * users });
    expect(db.upstream).toBeUndefined();
    console.log(`tiers without a budget: ${users} user requests; edge ${edge.admitted}, api ${api.admitted}, db ${db.admitted}`);
  });

  it("with a gRPC retry budget at each tier, retries only while its tokens last: at most 4 retries per tier", () => {
    // gRPC retry throttling, 10 tokens: each failure costs one, a retry goes only above 5 (A6), so a
    // tier whose every call fails retries at most 4 times, in all.
    const { userRequests: users, edge, api, db } = runs("grpcBudget");
    expect(edge.admitted).toBe(3 * users);
    for (const tier of [edge, api]) {
      expect(tier.upstream!.requests).toBe(tier.admitted);
      expect(tier.upstream!.attempts - tier.upstream!.requests).toBeLessThanOrEqual(4);
    }
    expect(api.admitted).toBe(edge.upstream!.attempts);
    expect(db.admitted).toBe(api.upstream!.attempts);
    expect(db.admitted).toBeLessThanOrEqual(3 * users + 8);
    console.log(`tiers with a budget: ${users} user requests; edge ${edge.admitted}, api ${api.admitted}, db ${db.admitted}`);
  });
});

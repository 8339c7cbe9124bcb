import { describe, expect, it } from "vitest";
import { streamRandom } from "../../../src/backoff/random.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { resolveRetryPolicy } from "../../../src/config/load.ts";
import { DEFAULT_THREAD_POOL } from "../../../src/model/servers/queue.ts";
import { policyAmplification } from "../../../src/model/tiers/amplification.ts";
import { UpstreamCalls } from "../../../src/model/upstream-calls.ts";
import type { ChainTierConfig, UpstreamPolicy } from "../../../src/config/chain-config.ts";
import { buildChain, simulateChain } from "../../../src/runner/chain.ts";
import { parseSimArgs } from "../../../src/options/sim.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import type { UpstreamCallEnd } from "../../../src/model/servers/upstream-pool.ts";

/** A caller's policy as its flags give it (the simulator's flag table, the client's resolution). */
function policy(args: readonly string[]): UpstreamPolicy {
  const parsed = parseSimArgs(args);
  if (parsed.kind !== "run") throw new Error("no help asked");
  return resolveRetryPolicy(parsed.values);
}

function tier(name: string, upstream: UpstreamPolicy | undefined, overrides: Partial<ChainTierConfig> = {}): ChainTierConfig {
  return {
    name,
    model: { kind: "queue", pool: { ...DEFAULT_THREAD_POOL, threads: 1000, serviceTimeMs: 5 } },
    cancelOnDisconnect: false,
    maxConcurrency: Infinity,
    maxInService: 1_000_000,
    backlog: 4096,
    errorRate: 0,
    retryAfterMs: 0,
    dropShed: false,
    deadlineAware: false,
    upstream,
    fanout: 1,
    faults: [],
    ...overrides,
  };
}

/**
 * `requests` user requests sent at once into a chain whose bottom answers every request 500,
 * run until every one has ended: each tier's arrivals, the users' own attempts among them.
 */
function failingChain(requests: number, users: UpstreamPolicy, tiers: readonly ChainTierConfig[]) {
  const clock = new ManualClock(0);
  const built = buildChain(clock, tiers, 5, users);
  const calls = new UpstreamCalls(clock, streamRandom(5, 99), {
    timeoutMs: users.timeoutMs,
    retry: users.retry,
    targets: [built[0]!.transport],
    maxCalls: requests,
  });
  const ends: UpstreamCallEnd[] = [];
  calls.reportTo({ callEnded: (_ticket, end) => ends.push(end), attemptSent: () => {}, attemptEnded: () => {} });
  for (let ticket = 0; ticket < requests; ticket++) calls.startCall(ticket, undefined, Infinity);
  while (ends.length < requests) clock.runUntil(clock.now() + 1_000);
  return { ends, arrivals: built.map((each) => each.door.arrivals), snapshots: built.map((each) => each.model.snapshot()) };
}

const THREE = ["-strategy", "fixed", "-simple-backoff-delay", "10ms", "-max-attempts", "3"];

describe("a simulated chain whose bottom fails everything", () => {
  it("multiplies the attempts: at each tier, exactly the product of the attempts of the callers above", () => {
    const users = policy([...THREE, "-timeout", "60s"]);
    const tiers = [
      tier("edge", policy([...THREE, "-timeout", "5s"])),
      tier("api", policy([...THREE, "-timeout", "1s"])),
      tier("db", undefined, { model: { kind: "queue", pool: { ...DEFAULT_THREAD_POOL, threads: 1000, serviceTimeMs: 10 } }, errorRate: 1 }),
    ];
    const { ends, arrivals } = failingChain(20, users, tiers);
    expect(ends).toEqual(Array.from({ length: 20 }, () => "failed"));
    const computed = policyAmplification(3, [
      { maxAttempts: 3, fanout: 1 },
      { maxAttempts: 3, fanout: 1 },
    ]);
    expect(computed).toEqual([3, 9, 27]);
    expect(arrivals).toEqual(computed.map((factor) => 20 * factor));
  });

  it("multiplies by the fan-out too", () => {
    const users = policy(["-max-attempts", "2", "-simple-backoff-delay", "1ms", "-timeout", "60s"]);
    const tiers = [
      tier("edge", policy(["-max-attempts", "2", "-simple-backoff-delay", "1ms", "-timeout", "5s"]), { fanout: 3 }),
      tier("db", undefined, { errorRate: 1 }),
    ];
    const { arrivals } = failingChain(10, users, tiers);
    expect(arrivals).toEqual(policyAmplification(2, [{ maxAttempts: 2, fanout: 3 }]).map((factor) => 10 * factor));
    expect(arrivals).toEqual([20, 120]);
  });

  it("with a budget at each tier, sends no more retries than the budget allows", () => {
    // Brooker's token bucket: 5 tokens, each new request adds 0.1, a retry needs more than 1 and takes 1.
    const budget = ["-budget", "brooker"];
    const users = policy([...THREE, "-timeout", "60s"]);
    const tiers = [
      tier("edge", policy([...THREE, ...budget, "-timeout", "5s"])),
      tier("api", policy([...THREE, ...budget, "-timeout", "1s"])),
      tier("db", undefined, { errorRate: 1 }),
    ];
    const requests = 200;
    const { arrivals, snapshots } = failingChain(requests, users, tiers);
    for (const index of [0, 1]) {
      const calls = snapshots[index]!.upstream!.requests;
      const retries = arrivals[index + 1]! - calls;
      // One bucket per tier (the tier is one client instance): at most 4 + 0.1 per request.
      expect(retries).toBeGreaterThan(0);
      expect(retries).toBeLessThanOrEqual(4 + 0.1 * calls);
    }
    expect(arrivals[0]).toBe(3 * requests);
    expect(arrivals[2]).toBeLessThan(27 * requests);
  });
});

describe("deadlines down a simulated chain", () => {
  /** 10 user requests at once through an edge that calls a one-thread, 100 ms, deadline-aware db. */
  function slowBottom(users: UpstreamPolicy, edge: UpstreamPolicy) {
    const tiers = [
      tier("edge", edge),
      tier("db", undefined, {
        model: { kind: "queue", pool: { ...DEFAULT_THREAD_POOL, threads: 1, serviceTimeMs: 100 } },
        deadlineAware: true,
      }),
    ];
    const { ends, snapshots } = failingChain(10, users, tiers);
    return { ends, db: snapshots[1]! };
  }

  it("carries the users' deadline through a tier that sends none of its own: the bottom drops the work nobody waits for", () => {
    // The users wait 250 ms; the edge waits 10 s and does not propagate, but carries theirs down.
    const carried = slowBottom(
      policy(["-max-attempts", "1", "-timeout", "250ms", "-propagate-deadline"]),
      policy(["-max-attempts", "1", "-timeout", "10s"]),
    );
    // The db's thread takes requests at 0, 100 and 200 ms, before the 250 ms deadline; the 7 others expire waiting.
    expect(carried.db.served).toBe(3);
    expect(carried.db.expired).toBe(7);
    // Without the users' deadline the db serves every request, most of them after their users gave up.
    const none = slowBottom(policy(["-max-attempts", "1", "-timeout", "250ms"]), policy(["-max-attempts", "1", "-timeout", "10s"]));
    expect(none.db.expired).toBe(0);
    expect(none.db.served).toBe(10);
  });
});

describe("the windows of a simulated chain", () => {
  it("counts what a stopped tier sends at its resume in the window that starts then, not in the one that ends then", () => {
    // The edge stopped from 1 s to 2 s: the users' attempts wait in its accept queue, and at its
    // resume, on a window's end, it calls the db for every one of them at once.
    const users = policy(["-max-attempts", "1", "-timeout", "10s"]);
    const stop = { kind: "stop" as const, atMs: 1_000, durationMs: 1_000, factor: 1, tier: "edge" };
    const result = simulateChain({
      users: 1_000,
      timeoutMs: users.timeoutMs,
      propagateDeadline: false,
      retry: users.retry,
      tiers: [tier("edge", policy(["-max-attempts", "1", "-timeout", "10s"]), { faults: [stop] }), tier("db", undefined)],
      spikes: [],
      intervalMs: 1_000,
      durationMs: 3_000,
      seed: 1,
    });
    const [edge, db] = result.tiers.map((each) => each.samples.map((sample) => sample.arrivals));
    expect(result.tiers[0]!.samples.map((sample) => sample.endMs)).toEqual([1_000, 2_000, 3_000]);
    const held = edge![1]! - edge![0]!;
    expect(held).toBeGreaterThan(50);
    // Nothing reached the db in the window that ended at the resume; the whole held burst, and what came after, in the next.
    expect(db![1]! - db![0]!).toBe(0);
    expect(db![2]! - db![1]!).toBeGreaterThanOrEqual(held);
  });
});

describe("a simulated chain's faults", () => {
  it("must end before the run ends: no verdict on a fault that never happened, or is still going", async () => {
    const { io, stdout } = capturedIo();
    await expect(simMain(["-faults", "db:crash@100s+1s", "examples/three-tiers.yaml"], io)).rejects.toThrow(
      new UsageError("-faults: the run ends at 50s, before db:crash@1m40s+1s ends: nothing to judge"),
    );
    // This one was judged: every tier "collapsed" in the middle of the crash.
    await expect(simMain(["-faults", "db:crash@40s+20s", "examples/three-tiers.yaml"], io)).rejects.toThrow(
      new UsageError("-faults: the run ends at 50s, before db:crash@40s+20s ends: nothing to judge"),
    );
    await expect(simMain(["-faults", "db:crash@50s+10s", "examples/three-tiers.yaml"], io)).rejects.toThrow(UsageError);
    expect(stdout()).toBe("");
  });
});

import { describe, expect, it } from "vitest";
import { constantPolicy, nextDelay } from "../../../../src/backoff/index.ts";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import { averageOccTrials } from "../../../../src/model/occ/occ-average.ts";
import { OccClient, type OccClientTally } from "../../../../src/model/occ/occ-client.ts";
import type { OccTransport, OccWriteOutcome } from "../../../../src/model/occ/occ-transport.ts";
import { runOccTrial } from "../../../../src/model/occ/occ-trial.ts";
import { BLOG_NETWORK } from "../../../../src/model/occ/network-delay.ts";
import { VersionedRow } from "../../../../src/model/occ/versioned-row.ts";
import { BLOG_BASE_MS, BLOG_CAP_MS, BLOG_RUNS, blogPolicy, parseBlogRuns } from "../../../../src/strategies/blog-backoff.ts";

/** A transport that answers at once from a script of outcomes, recording when each call came. */
class ScriptedTransport implements OccTransport {
  readonly calls: string[] = [];
  private readonly clock: ManualClock;
  private readonly writes: OccWriteOutcome[];
  constructor(clock: ManualClock, writes: OccWriteOutcome[]) {
    this.clock = clock;
    this.writes = writes;
  }
  read(done: (version: number | undefined) => void): void {
    this.calls.push(`read@${this.clock.now()}`);
    done(this.calls.length);
  }
  write(version: number, done: (outcome: OccWriteOutcome) => void): void {
    this.calls.push(`write(${version})@${this.clock.now()}`);
    done(this.writes.shift() ?? "written");
  }
}

describe("versioned row", () => {
  it("lands a write against the current version only, and counts every call", () => {
    const row = new VersionedRow();
    const first = row.read();
    const second = row.read();
    expect(row.write(first)).toBe(true);
    expect(row.write(second)).toBe(false);
    expect(row.write(row.read())).toBe(true);
    expect({ version: row.version, reads: row.reads, writes: row.writes, conflicts: row.conflicts }).toEqual({
      version: 2,
      reads: 3,
      writes: 3,
      conflicts: 1,
    });
  });
});

describe("OCC client", () => {
  it("reads again after each conflict, once the policy's wait has passed, until its write lands", () => {
    const clock = new ManualClock();
    const transport = new ScriptedTransport(clock, ["conflict", "error", "written"]);
    const tallies: OccClientTally[] = [];
    new OccClient(transport, constantPolicy({ delayMs: 7 }), seededRandom(1), clock, (tally) => tallies.push(tally)).start();
    expect(transport.calls).toEqual(["read@0", "write(1)@0"]);
    clock.advanceBy(6.9);
    expect(transport.calls).toHaveLength(2);
    clock.runAll();
    expect(transport.calls).toEqual(["read@0", "write(1)@0", "read@7", "write(3)@7", "read@14", "write(5)@14"]);
    expect(tallies).toEqual([{ reads: 3, writes: 3, conflicts: 1, errors: 1, doneAtMs: 14, succeeded: true }]);
  });

  it("waits what the blog's policy draws for the n-th consecutive conflict", () => {
    const clock = new ManualClock();
    const policy = blogPolicy(parseBlogRuns("exponential")[0]!, BLOG_BASE_MS, BLOG_CAP_MS);
    const transport = new ScriptedTransport(clock, ["conflict", "conflict", "conflict"]);
    new OccClient(transport, policy, seededRandom(1), clock, () => {}).start();
    clock.runAll();
    // The blog simulator's expo(n) = min(cap, 2^n x base): 10, 20, 40 ms.
    expect(transport.calls.filter((call) => call.startsWith("read"))).toEqual(["read@0", "read@10", "read@30", "read@70"]);
  });
});

describe("the blog's policies", () => {
  it("draw the blog simulator's waits: ceilings min(2000, 5 x 2^n) from n = 1, decorrelated from 5 ms", () => {
    const policies = Object.fromEntries(BLOG_RUNS.map((run) => [run.name, blogPolicy(run, BLOG_BASE_MS, BLOG_CAP_MS)]));
    // Each wait on a fresh generator: the same first draw u on both sides.
    const u = seededRandom(3).uniform();
    const wait = (name: string, failures: number, previous?: number) => nextDelay(policies[name]!, failures, previous, seededRandom(3));
    expect(wait("none", 4)).toBe(0);
    expect([1, 2, 3, 9].map((failures) => wait("exponential", failures))).toEqual([10, 20, 40, 2000]);
    expect(wait("full-jitter", 1)).toBe(u * 10);
    expect(wait("full-jitter", 3)).toBe(u * 40);
    expect(wait("equal-jitter", 2)).toBe(10 + u * 10);
    expect(wait("decorrelated-jitter", 1)).toBe(5 + u * 10);
    expect(wait("decorrelated-jitter", 2, 12)).toBe(5 + u * 31);
  });
});

describe("OCC trial", () => {
  it("with a fixed network: two clients read version 0, one write lands, the other reads again and lands at 8 legs", () => {
    const result = runOccTrial({ clients: 2, policy: constantPolicy({ delayMs: 0 }), network: { meanMs: 10, sdMs: 0 }, seed: 1 });
    expect(result).toEqual({ clients: 2, writes: 3, calls: 6, conflicts: 1, completionMs: 80, landed: 2, gaveUp: 0 });
  });

  it("lands every client's write exactly once, whatever the policy", () => {
    for (const run of BLOG_RUNS) {
      const result = runOccTrial({ clients: 30, policy: blogPolicy(run, BLOG_BASE_MS, BLOG_CAP_MS), network: BLOG_NETWORK, seed: 9 });
      expect(result.landed, run.name).toBe(30);
      expect(result.writes - result.conflicts, run.name).toBe(30);
      expect(result.calls, run.name).toBe(2 * result.writes);
    }
  });

  it("is reproducible from its seed", () => {
    const config = { clients: 20, policy: blogPolicy(BLOG_RUNS[2], BLOG_BASE_MS, BLOG_CAP_MS), network: BLOG_NETWORK, seed: 4 };
    expect(runOccTrial(config)).toEqual(runOccTrial(config));
  });

  it("reproduces the blog's shape at 50 clients: exponential without jitter slowest, jitter the least work", () => {
    const figures = Object.fromEntries(
      BLOG_RUNS.map((run) => [
        run.name,
        averageOccTrials({ clients: 50, policy: blogPolicy(run, BLOG_BASE_MS, BLOG_CAP_MS), network: BLOG_NETWORK, seed: 1 }, 10),
      ]),
    );
    const work = (name: string) => figures[name]!.writes;
    const time = (name: string) => figures[name]!.completionMs;
    for (const jittered of ["full-jitter", "equal-jitter", "decorrelated-jitter"]) {
      expect(work(jittered), jittered).toBeLessThan(work("exponential"));
      expect(work(jittered), jittered).toBeLessThan(work("none"));
      expect(time(jittered), jittered).toBeLessThan(time("exponential") / 5);
    }
    expect(work("full-jitter")).toBeLessThan(work("decorrelated-jitter"));
    expect(time("full-jitter")).toBeLessThan(time("equal-jitter"));
  });
});

import { describe, expect, it } from "vitest";
import { run } from "../../../src/sim/main.ts";
import { parseSimArgs, type SimFlagValues } from "../../../src/options/sim.ts";

function values(args: readonly string[]): SimFlagValues {
  const parsed = parseSimArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.values;
}

/**
 * `./sim -clients 1000000 -duration 10m -outage-at 60s -outage 20s -seed 1` used to die
 * with "Invalid array length" after storing 66 million requests in service. The same run
 * with a hundredth of the clients takes under a second and collapses the same way.
 */
const FAILING = ["-clients", "10000", "-outage-at", "60s", "-outage", "20s", "-seed", "1"];
/** A few seconds on a loaded 2-core machine; the limit only bounds a hung run, it measures nothing. */
const SIMULATION = { timeout: 60_000 };

describe("simulate, with requests that can never complete", () => {
  it("counts them instead of storing them: the count grows with the run, what is stored does not", SIMULATION, () => {
    // The memory limit raised to its ceiling, so that the server does not die first.
    const at = (duration: string) => run(values([...FAILING, "-duration", duration, "-max-in-service", "10000000"]), "fixed");
    const shorter = at("5m");
    const longer = at("10m");
    for (const { result, metrics } of [shorter, longer]) {
      expect(result.outOfMemory).toBeUndefined();
      expect(metrics.verdict).toBe("collapsed");
      expect(metrics.serverRecoveryMs).toBeUndefined();
      expect(result.server.at(-1)!.concurrency).toBe(result.countedRequests); // everything left in service is counted
    }
    expect(longer.result.endMs).toBe(600_000);
    expect(shorter.result.countedRequests).toBeGreaterThan(1_000_000);
    expect(longer.result.countedRequests).toBeGreaterThan(2 * shorter.result.countedRequests - 100_000);
    // Stored one by one only while some could still complete within the run: a few thousand.
    expect(longer.result.mostStoredRequests).toBeLessThan(10_000);
    expect(longer.result.mostStoredRequests).toBeLessThanOrEqual(shorter.result.mostStoredRequests + 1_000);
    expect(longer.metrics.why).toMatch(
      /^server still above its limit of 30 at its last report, 520\.0 s after resume, with \d+ requests in service/,
    );
  });

  it("with the default memory limit, the server runs out of memory and the run ends there, collapsed", SIMULATION, () => {
    const { result, metrics, strategyResult } = run(values([...FAILING, "-duration", "10m"]), "fixed");
    expect(result.outOfMemory).toEqual({ atMs: expect.any(Number), inService: 800_000 });
    expect(result.endMs).toBe(result.outOfMemory!.atMs);
    expect(result.endMs).toBeGreaterThan(80_000); // after the resume
    expect(result.endMs).toBeLessThan(600_000);
    expect(result.server.at(-1)!.atMs).toBeLessThanOrEqual(result.endMs);
    expect(result.totals.endMs).toBe(result.endMs);
    expect(strategyResult.phases.endMs).toBe(result.endMs);
    expect(metrics.verdict).toBe("collapsed");
    expect(metrics.why).toMatch(
      /^server ran out of memory with 800000 requests in service \d+\.\d s after resume; a real server crashes there$/,
    );
  });

  it("ends instead of trading 503s forever with clients that retry without waiting", SIMULATION, () => {
    const { result } = run(
      values(["-clients", "10", "-lambda", "0.01", "-duration", "5s", "-max-concurrency", "1", "-simple-backoff-delay", "0"]),
      "fixed",
    );
    expect(result.endMs).toBe(5_000);
    expect(result.totals.counts.errorKinds["http-5xx"]).toBeGreaterThan(50_000); // one in service, nine retrying
    // One round trip per shed attempt at most: 10 clients, 2 000 a second each, for 5 s.
    expect(result.totals.counts.attempts).toBeLessThanOrEqual(10 * 2_000 * 5 + 100);
  });

  it(
    "with -shed-with drop, answers no shed request: each client waits out its timeout, as for a SYN a full accept queue drops",
    SIMULATION,
    () => {
      const shed = (shedWith: string) =>
        run(
          values([
            ...["-model", "queue", "-threads", "1", "-service-time", "100ms", "-queue-limit", "1", "-shed-with", shedWith],
            ...["-clients", "10", "-lambda", "0.01", "-timeout", "1s", "-duration", "5s", "-simple-backoff-delay", "0"],
          ]),
          "fixed",
        ).result;
      const answered = shed("503");
      const dropped = shed("drop");
      expect(answered.totals.counts.errorKinds["http-5xx"]).toBeGreaterThan(1_000);
      expect(dropped.totals.counts.errorKinds["http-5xx"] ?? 0).toBe(0);
      // Two served at a time at most (the thread and the one place in the queue): the other eight wait out 1 s each try.
      expect(dropped.totals.counts.timedout).toBeGreaterThan(8 * 3);
      expect(dropped.totals.counts.attempts).toBeLessThan(answered.totals.counts.attempts / 10);
    },
  );
});

import { describe, expect, it } from "vitest";
import { parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";
import { autoWorkers, behindWarning, cores, suggestedWorkers, USERS_PER_THREAD } from "../../../src/options/client-workers.ts";

const resolve = (args: string[]) => {
  const parsed = parseClientArgs(args);
  if (parsed.kind !== "run") throw new Error("expected values");
  return resolveClientOptions(parsed.values);
};

describe("-workers auto", () => {
  it("gives each thread at most USERS_PER_THREAD users, and never more threads than cores", () => {
    expect(autoWorkers(1_000, 16)).toBe(1);
    expect(autoWorkers(USERS_PER_THREAD, 16)).toBe(1);
    expect(autoWorkers(USERS_PER_THREAD + 1, 16)).toBe(2);
    expect(autoWorkers(10 * USERS_PER_THREAD, 16)).toBe(10);
    expect(autoWorkers(100 * USERS_PER_THREAD, 16)).toBe(16);
    expect(autoWorkers(100 * USERS_PER_THREAD, 1)).toBe(1);
  });

  it("resolves from the flags: this shard's users, one thread where only one works", () => {
    expect(resolve(["-workers", "auto", "-clients", "1000"]).workers).toBe(1);
    expect(resolve(["-workers", "auto", "-clients", String(4 * USERS_PER_THREAD)]).workers).toBe(Math.min(4, cores()));
    expect(resolve(["-workers", "auto", "-clients", String(4 * USERS_PER_THREAD), "-shard", "0/4"]).workers).toBe(1);
    expect(resolve(["-workers", "auto", "-clients", String(4 * USERS_PER_THREAD), "-metrics-listen", "127.0.0.1:0"]).workers).toBe(1);
    expect(resolve(["-workers", "auto", "-clients", String(4 * USERS_PER_THREAD), "-budget", "grpc", "-instances", "1"]).workers).toBe(1);
    // A later -workers wins, as the demo passes -workers auto before the user's flags.
    expect(resolve(["-workers", "auto", "-clients", "1000", "-workers", "3"]).workers).toBe(3);
    expect(resolve(["-workers", "2"]).workers).toBe(2);
  });

  it("refuses anything but auto or a thread count", () => {
    for (const value of ["0", "many", "1.5", "1025"])
      expect(() => parseClientArgs(["-workers", value])).toThrow(/must be auto or an integer/);
  });
});

describe("the warning of a client that fell behind", () => {
  it("suggests more threads while there are cores, then shards, and the descriptor limit when attempts could not be sent", () => {
    expect(suggestedWorkers(100_000, 1, 8)).toBe(Math.ceil(100_000 / USERS_PER_THREAD));
    expect(suggestedWorkers(1_000, 1, 8)).toBe(2);
    const end = new Date(Date.UTC(2026, 0, 1));
    const late = "attempts sent late: lateness p99 1900 ms (max 7300 ms) above 200 ms";
    expect(behindWarning(late, end, { users: 100_000, threads: 1, notSent: 0, fdLimit: 1024 }, 8)).toBe(
      `client: WARNING: the client fell behind in the window ending 2026-01-01T00:00:00.000Z: ${late}. ` +
        `This window measures the client's own lag, not the server. Remedy: run with -workers ${Math.ceil(100_000 / USERS_PER_THREAD)} ` +
        "(or -workers auto; this machine has 8 cores).",
    );
    expect(behindWarning(late, end, { users: 100_000, threads: 2, notSent: 0, fdLimit: 1024 }, 2)).toContain(
      "split the herd over machines with -shard i/n (this machine has 2 cores, all in use)",
    );
    expect(behindWarning("3 attempts could not be sent", end, { users: 10, threads: 1, notSent: 3, fdLimit: 64 }, 2)).toContain(
      "Remedy: raise the descriptor limit with ulimit -n (now 64)",
    );
  });
});

import { availableParallelism } from "node:os";

/**
 * How many users one worker thread of ./client carries while its achieved OK rate stays
 * within 2 % of the expected (users / lambda) against a server that never collapses
 * (`./server -limit 10000000`). Measured by `npm run bench -- client` (scripts/bench-client.ts,
 * its capacity table: the largest herd per thread count within 2 % of the expected rate, with
 * no window the client marked as behind). On this project's 2-core machine (BENCHMARKS.md):
 * 80 000 users on one thread, 120 000 on two (the server shares the two cores). About three
 * quarters of the one-thread row, as a margin for a busier or slower machine.
 */
export const USERS_PER_THREAD = 60_000;

/** The cores Node may use. */
export function cores(): number {
  return availableParallelism();
}

/**
 * `-workers auto`: enough threads that each carries at most USERS_PER_THREAD users, and no
 * more than the cores (more threads than cores share them and help nothing).
 */
export function autoWorkers(users: number, available = cores()): number {
  return Math.max(1, Math.min(Math.ceil(users / USERS_PER_THREAD), available));
}

/** The thread count to suggest to a client that fell behind with `threads` threads. */
export function suggestedWorkers(users: number, threads: number, available = cores()): number {
  return Math.min(Math.max(threads + 1, Math.ceil(users / USERS_PER_THREAD)), Math.max(available, threads + 1));
}

/** The stderr warning for a window in which the client fell behind: the figure and the remedy. */
export function behindWarning(
  reason: string,
  windowEnd: Date,
  load: { users: number; threads: number; notSent: number; fdLimit: number | undefined },
  available = cores(),
): string {
  const { users, threads } = load;
  const remedies: string[] = [];
  if (load.notSent > 0) {
    // Threads share the process's descriptors and the machine's ports: more threads do not help there.
    const limit = load.fdLimit === undefined ? "" : ` (now ${load.fdLimit})`;
    remedies.push(`raise the descriptor limit with ulimit -n${limit}, or split the herd over machines with -shard i/n`);
  }
  remedies.push(
    threads >= available
      ? `run fewer users per process: split the herd over machines with -shard i/n (this machine has ${available} cores, all in use)`
      : `run with -workers ${suggestedWorkers(users, threads, available)} (or -workers auto; this machine has ${available} cores)`,
  );
  return (
    `client: WARNING: the client fell behind in the window ending ${windowEnd.toISOString()}: ${reason}. ` +
    `This window measures the client's own lag, not the server. Remedy: ${remedies.join("; ")}.`
  );
}

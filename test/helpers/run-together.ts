import { beforeAll } from "vitest";

/**
 * Independent real-time runs of one describe block, started together: most of each is waiting
 * (a client's -duration, a server's answers), so side by side they take about as long as the
 * longest instead of their sum. A `beforeAll` starts every run and waits for all of them to end,
 * so no process is left running into a test (the per-test clean-up stops whatever is); each test
 * then judges its own run's result, or fails with its own run's error.
 * It helps runs that wait, and single-threaded start-ups (two of them use the two cores one alone
 * leaves half idle); runs that already keep every core busy only take turns.
 */
export function runTogether<Runs extends Record<string, () => Promise<unknown>>>(
  runs: Runs,
  options: { timeoutMs?: number } = {},
): <Name extends keyof Runs>(name: Name) => Awaited<ReturnType<Runs[Name]>> {
  const settled = new Map<keyof Runs, PromiseSettledResult<unknown>>();
  beforeAll(async () => {
    const names = Object.keys(runs) as (keyof Runs)[];
    const results = await Promise.allSettled(names.map((name) => runs[name]!()));
    names.forEach((name, index) => settled.set(name, results[index]!));
  }, options.timeoutMs);
  return (name) => {
    const result = settled.get(name);
    if (result === undefined) throw new Error(`run ${String(name)} did not take place`);
    if (result.status === "rejected") throw result.reason;
    return result.value as Awaited<ReturnType<Runs[typeof name]>>;
  };
}

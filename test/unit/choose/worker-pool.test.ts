import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { inlineRunner, type JobRunner, threadRunner } from "../../../src/choose/worker-pool.ts";

/** Squares its input and answers with the square and the id of the thread that computed it. */
const WORKER = new URL("../../helpers/square-worker.ts", import.meta.url);
type Squared = [number, number];
const runners: JobRunner<number, Squared>[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.close()));
});

function pool(size: number): JobRunner<number, Squared> {
  const runner = threadRunner<number, Squared>(WORKER, size);
  runners.push(runner);
  return runner;
}

describe("the worker pool", () => {
  it("returns results in input order whatever the number of threads, and reports each job as it finishes", async () => {
    const inputs = Array.from({ length: 40 }, (_, index) => index);
    const expected = inputs.map((input) => input * input);
    for (const size of [1, 3]) {
      const finished = new Set<number>();
      const outputs = await pool(size).run(inputs, (index, [square]) => {
        expect(square).toBe(index * index);
        finished.add(index);
      });
      expect(outputs.map(([square]) => square)).toEqual(expected);
      expect(finished.size).toBe(inputs.length);
      // Every job ran on a worker thread, and every worker thread got work.
      const threads = new Set(outputs.map(([, thread]) => thread));
      expect(threads.has(threadId)).toBe(false);
      expect(threads.size).toBe(size);
    }
    expect(await inlineRunner((input: number) => input * input).run(inputs)).toEqual(expected);
  });

  it("runs several batches on the same threads", async () => {
    const runner = pool(2);
    expect((await runner.run([2, 3])).map(([square]) => square)).toEqual([4, 9]);
    expect(await runner.run([])).toEqual([]);
    expect((await runner.run([5])).map(([square]) => square)).toEqual([25]);
  });

  it("rejects a run with the failing job's message", async () => {
    await expect(pool(2).run([1, 2, -3, 4])).rejects.toThrow(/job 2 failed: Error: negative input -3/);
  });
});

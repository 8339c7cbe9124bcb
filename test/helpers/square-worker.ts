// A worker module for the pool's tests: squares a number (and says which thread did it), and fails on a negative one.
import { threadId } from "node:worker_threads";
import { serveJobs } from "../../src/choose/worker-pool.ts";

serveJobs((input: number): [number, number] => {
  if (input < 0) throw new Error(`negative input ${input}`);
  return [input * input, threadId];
});

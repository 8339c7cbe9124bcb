import { afterEach, describe, expect, it } from "vitest";
import { parseSimArgs } from "../../../src/options/sim.ts";
import { simulationConfigFrom } from "../../../src/config/simulation.ts";
import { trialMetrics } from "../../../src/sim/trial.ts";
import { WorkerPool, type WorkerRole, workerScript } from "../../../src/runtime/worker-pool.ts";
import { type MeasureJob, measure, type SeedResult } from "../../../src/recommend/measure.ts";
import { simValuesFor } from "../../../src/recommend/settings.ts";

/** Small simulations: the simulator's own task, run in worker threads started from the TypeScript sources. */
const trial = (clients: number) => {
  const parsed = parseSimArgs([
    "-clients",
    String(clients),
    "-lambda",
    "2",
    "-duration",
    "20s",
    "-outage-at",
    "5s",
    "-outage",
    "3s",
    "-interval",
    "2s",
  ]);
  if (parsed.kind !== "run") throw new Error("help?");
  return parsed.values;
};

const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
const pool = (role: WorkerRole, size: number) => {
  const made = new WorkerPool(role, size);
  pools.push(made);
  return made;
};

describe("WorkerPool", () => {
  it("finds the worker entry beside itself however the program runs", () => {
    expect(workerScript("file:///p/src/runtime/worker-pool.ts")).toEqual({
      script: new URL("file:///p/src/runtime/ts-worker-boot.mjs"),
      entry: "file:///p/src/bin/worker-entry.ts",
    });
    expect(workerScript("file:///p/dist/runtime/worker-pool.js")).toEqual({
      script: new URL("file:///p/dist/bin/worker-entry.js"),
      entry: undefined,
    });
    expect(workerScript("file:///p/node_modules/.cache/thundering-herd/sim.mjs")).toEqual({
      script: new URL("file:///p/node_modules/.cache/thundering-herd/worker-entry.mjs"),
      entry: undefined,
    });
  });

  it("runs tasks on worker threads and gives each result to its own caller, whatever order they finish in", async () => {
    const sims = pool("sim", 2);
    // A long task first: the short ones finish before it on the other worker.
    const sizes = [2_000, 50, 80, 120];
    const results = await Promise.all(sizes.map((clients) => sims.run("metrics", trial(clients))));
    expect(results).toEqual(sizes.map((clients) => trialMetrics(trial(clients))));
  });

  it("runs choose's measurements, the same as in this thread, their latencies moved back as a typed array", async () => {
    const job: MeasureJob = {
      candidateIndex: 0,
      seed: 5,
      config: simulationConfigFrom(simValuesFor({ clients: 100, lambda: 2, timeout: 400, interval: 1_000 }, { strategy: "full-jitter" })),
      plan: {
        steadyMs: 3_000,
        observeMs: 8_000,
        everydayMs: 5_000,
        sloMs: 2_000,
        outagesMs: [2_000],
        minOutageMs: 250,
        maxOutageMs: 4_000,
        bisectionRatio: 1.5,
        bisectionMs: 1_000,
      },
      keepTimelines: false,
    };
    const result = await pool("choose", 1).run<SeedResult>("measure", job);
    expect(result.everyday.latenciesMs).toBeInstanceOf(Float64Array);
    expect(result).toEqual(measure(job));
  });

  it("rejects a task whose handler throws, with its message, and keeps serving", async () => {
    const sims = pool("sim", 1);
    await expect(sims.run("metrics", { ...trial(10), outage: "1s,2s" })).rejects.toThrow(
      "-outage lists 2 durations for the 1 outages of -outage-at",
    );
    await expect(sims.run("no-such-task", {})).rejects.toThrow('unknown task "no-such-task"');
    expect(await sims.run("metrics", trial(10))).toEqual(trialMetrics(trial(10)));
  });

  it("fails the task of a worker that dies, naming it, and rejects queued tasks when closed", async () => {
    const broken = pool("nonsense" as WorkerRole, 1);
    await expect(broken.run("metrics", trial(10))).rejects.toThrow(/worker thread (failed|exited)/);
    const sims = pool("sim", 1);
    const outcomes = Promise.allSettled([sims.run("metrics", trial(3_000)), sims.run("metrics", trial(10))]);
    await sims.close();
    for (const outcome of await outcomes) expect(outcome).toMatchObject({ status: "rejected", reason: new Error("WorkerPool: closed") });
    await expect(sims.run("metrics", trial(10))).rejects.toThrow("closed");
  });
});

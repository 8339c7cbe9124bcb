import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../../src/clock/manual-clock.ts";
import { queue, queueFigures } from "../../../../../src/model/servers/kinds/queue.ts";
import { OrderedPool } from "../../../../../src/model/servers/ordered-pool.ts";
import { DEFAULT_THREAD_POOL, ThreadPool } from "../../../../../src/model/servers/queue.ts";
import { UpstreamPool } from "../../../../../src/model/servers/upstream-pool.ts";
import { serverModelFromArgs, settingsArgs } from "../../../../helpers/server-model-flags.ts";

describe("queueFigures", () => {
  it("states the capacity (threads ÷ mean service time) and the tipping point of a fifo queue", () => {
    const shape = { ...DEFAULT_THREAD_POOL, threads: 8, serviceTimeMs: 20 };
    const figures = queueFigures(shape, 2000);
    expect(figures.capacityPerSec).toBe(400);
    expect(figures.capacityAtConcurrency).toBe(8);
    // 799 in the server: the newest waits (799 - 8 + 1) / 8 = 99 rounds of 20 ms, then 20 ms of its own: 2 s.
    expect(figures.tippingConcurrency).toBe(799);
    expect(figures.overloadAbove).toBe(16);
  });

  it("has no tipping point for a lifo queue, nor for a queue too short to reach it", () => {
    const shape = { ...DEFAULT_THREAD_POOL, threads: 8, serviceTimeMs: 20 };
    expect(queueFigures({ ...shape, queueOrder: "lifo" }, 2000).tippingConcurrency).toBeUndefined();
    expect(queueFigures({ ...shape, queueLimit: 100 }, 2000).tippingConcurrency).toBeUndefined();
    expect(queueFigures({ ...shape, queueLimit: 791 }, 2000).tippingConcurrency).toBe(799);
    expect(queueFigures({ ...shape, queueLimit: 3 }, 2000).overloadAbove).toBe(10);
    expect(queueFigures({ ...shape, serviceTimeMs: 3000 }, 2000).tippingConcurrency).toBe(0);
  });
});

describe("the queue model's definition", () => {
  const spec = { kind: "queue", pool: { ...DEFAULT_THREAD_POOL, threads: 4, serviceTimeMs: 50 } } as const;
  const lognormal = { kind: "queue", pool: { ...spec.pool, serviceDist: "lognormal", serviceSigma: 0.8 } } as const;
  const options = { cancelOnDisconnect: false, maxConcurrency: Infinity, serviceRandom: seededRandom(1) };

  it("is read back from its own flag settings (a fit's: fifo, unbounded), and refuses a sigma without lognormal times", () => {
    expect(queue.settings(spec)).toEqual({ model: "queue", threads: 4, "service-time": "50ms", "service-dist": "constant" });
    expect(serverModelFromArgs(settingsArgs(queue.settings(spec)))).toEqual(spec);
    expect(queue.settings(lognormal)).toMatchObject({ "service-dist": "lognormal", "service-sigma": 0.8 });
    expect(serverModelFromArgs(settingsArgs(queue.settings(lognormal)))).toEqual(lognormal);
    expect(() => serverModelFromArgs(["-model", "queue", "-service-sigma", "1"])).toThrow("-service-sigma needs -service-dist lognormal");
  });

  it("describes its pool as its flags name it, and its figures", () => {
    expect(queue.describe(spec)).toBe("queue (4 threads, constant service time 50ms, fifo, unbounded queue)");
    expect(queue.describe({ kind: "queue", pool: { ...lognormal.pool, queueOrder: "lifo", queueLimit: 10 } })).toBe(
      "queue (4 threads, lognormal (sigma 0.8) service time 50ms, lifo, queue of 10)",
    );
    expect(queue.figures(spec, 2000, Infinity)).toEqual(queueFigures(spec.pool, 2000));
  });

  it("is an OrderedPool only where the caller promises fixed service times, and can be a middle tier", () => {
    const clock = new ManualClock();
    expect(queue.create(spec, clock, { ...options, fixedServiceTime: true })).toBeInstanceOf(OrderedPool);
    expect(queue.create(spec, clock, options)).toBeInstanceOf(ThreadPool);
    expect(queue.create(lognormal, clock, { ...options, fixedServiceTime: true })).not.toBeInstanceOf(OrderedPool);
    expect(queue.middleTier!.threads(spec)).toBe(4);
    const caller = { startCall: () => {}, cancelCall: () => {} };
    expect(queue.middleTier!.create(spec, clock, options, caller)).toBeInstanceOf(UpstreamPool);
  });

  it("rounds a fitted service time to three digits; its closed loop saturates at threads ÷ service time", () => {
    expect(queue.rounded({ kind: "queue", pool: { ...spec.pool, serviceTimeMs: 50.1234 } }).pool.serviceTimeMs).toBe(50.1);
    expect(queue.closedLoopLatencyMs(spec, 2, 10)).toBe(60);
    expect(queue.closedLoopLatencyMs(spec, 40, 10)).toBe(500);
    // 4 threads × 1 s ÷ 50 ms: 80 may wait.
    expect(queue.shedding(spec, 2000)).toMatchObject({ flag: "queue-limit", at: 80 });
    expect(queue.drawsRandom(spec)).toBe(false);
    expect(queue.drawsRandom(lognormal)).toBe(true);
  });
});

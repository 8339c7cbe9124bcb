import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import type { Completion } from "../../../../src/model/service-queue.ts";
import { DEFAULT_THREAD_POOL, drawServiceTimeMs, type ThreadPoolOptions } from "../../../../src/model/servers/queue.ts";
import { testThreadPool } from "../../../helpers/thread-pool.ts";
import { warmProbe } from "../../../helpers/warm-probe.ts";

/** A pool of `threads` with a constant 100 ms service time unless told otherwise. */
function setUp(overrides: Partial<ThreadPoolOptions> = {}) {
  const clock = new ManualClock();
  const pool = testThreadPool(clock, overrides);
  const completions: string[] = [];
  const record = (name: string, completion: Completion) =>
    completions.push(completion === "served" ? `${name}@${clock.now()}` : `${name}:${completion}@${clock.now()}`);
  const arrive = (name: string, deadlineAt?: number) => pool.admit(record, name, deadlineAt);
  return { clock, pool, completions, arrive };
}

describe("ThreadPool (the queue model)", () => {
  it("serves `threads` at once and the rest in rounds, oldest first (fifo, unbounded)", () => {
    const { clock, pool, completions, arrive } = setUp({ threads: 2 });
    for (const name of ["a", "b", "c", "d", "e"]) arrive(name);
    expect(pool.snapshot()).toMatchObject({ concurrency: 5, queueLength: 3, threadsBusy: 2, threads: 2 });
    clock.advanceBy(99.999);
    expect(completions).toEqual([]);
    clock.advanceBy(0.001);
    expect(completions).toEqual(["a@100", "b@100"]);
    expect(pool.snapshot()).toMatchObject({ concurrency: 3, queueLength: 1, threadsBusy: 2 });
    clock.advanceBy(200);
    expect(completions).toEqual(["a@100", "b@100", "c@200", "d@200", "e@300"]);
    expect(pool.lastDelayMs).toBe(300); // e waited two rounds and was served in the third
    expect(pool.snapshot()).toMatchObject({ concurrency: 0, served: 5, peakConcurrency: 5, peakDelayMs: 300 });
  });

  it("answers 4, 8 and 12 concurrent requests in rounds, as gunicorn's 4 sync workers × 50 ms do", () => {
    const { clock, completions, arrive } = setUp({ threads: 4, serviceTimeMs: 50 });
    for (let index = 0; index < 12; index++) arrive(`r${index}`);
    clock.advanceBy(200);
    const instants = completions.map((entry) => Number(entry.split("@")[1]));
    expect(instants).toEqual([50, 50, 50, 50, 100, 100, 100, 100, 150, 150, 150, 150]);
  });

  it("gives a free thread the newest waiting request (lifo)", () => {
    const { clock, completions, arrive } = setUp({ queueOrder: "lifo" });
    arrive("a");
    clock.advanceBy(10);
    arrive("b");
    clock.advanceBy(10);
    arrive("c");
    clock.advanceBy(10);
    arrive("d");
    clock.advanceBy(400);
    expect(completions).toEqual(["a@100", "d@200", "c@300", "b@400"]);
  });

  it("answers 503 at once beyond -queue-limit waiting requests, and takes them again once there is room", () => {
    const { clock, pool, completions, arrive } = setUp({ queueLimit: 2 });
    expect(arrive("a")).toBeDefined(); // in the thread
    expect(arrive("b")).toBeDefined();
    expect(arrive("c")).toBeDefined();
    expect(arrive("d")).toBeUndefined();
    expect(pool.snapshot()).toMatchObject({ shed: 1, concurrency: 3, queueLength: 2 });
    clock.advanceBy(100); // a done, b in the thread: room for one
    expect(arrive("e")).toBeDefined();
    clock.advanceBy(300);
    expect(completions).toEqual(["a@100", "b@200", "c@300", "e@400"]);
  });

  it("keeps a timed-out client's request in the queue and in its thread: the work is done for nobody", () => {
    const { clock, pool, completions, arrive } = setUp();
    const a = arrive("a")!;
    const b = arrive("b")!;
    arrive("c");
    clock.advanceBy(50);
    pool.abandon(a);
    pool.abandon(b);
    expect(pool.snapshot()).toMatchObject({ concurrency: 3, abandonedInService: 2 });
    clock.advanceBy(250);
    expect(completions).toEqual(["c@300"]);
    expect(pool.snapshot()).toMatchObject({ served: 1, abandoned: 2, abandonedInService: 0, cancelled: 0 });
  });

  it("with cancel-on-disconnect takes the request out of the queue, or frees its thread at once", () => {
    const { clock, pool, completions, arrive } = setUp({ cancelOnDisconnect: true });
    const a = arrive("a")!;
    const b = arrive("b")!;
    arrive("c");
    arrive("d");
    clock.advanceBy(20);
    pool.abandon(b); // waiting: out of the queue
    expect(pool.snapshot()).toMatchObject({ concurrency: 3, queueLength: 2, cancelled: 1 });
    clock.advanceBy(30);
    pool.abandon(a); // in the thread at 50: c starts now
    expect(pool.snapshot()).toMatchObject({ concurrency: 2, queueLength: 1, threadsBusy: 1, cancelled: 2 });
    clock.advanceBy(200);
    expect(completions).toEqual(["c@150", "d@250"]);
    expect(pool.snapshot()).toMatchObject({ served: 2, abandoned: 0, cancelled: 2 });
  });

  it("with cancel-on-disconnect in a fifo queue, serves everyone still waiting in order when its array is trimmed at a cancelled request", () => {
    const { clock, pool, completions, arrive } = setUp({ cancelOnDisconnect: true, serviceTimeMs: 1 });
    const tickets = Array.from({ length: 3000 }, (_, index) => arrive(`r${index}`)!);
    // The queue's array (r1 to r2999) is trimmed once 1 500 of it are taken: there, at r1500, a cancelled request.
    pool.abandon(tickets[1500]!);
    pool.abandon(tickets[1501]!);
    clock.advanceBy(3000);
    const expected = Array.from({ length: 3000 }, (_, index) => index)
      .filter((index) => index !== 1500 && index !== 1501)
      .map((index, order) => `r${index}@${order + 1}`);
    expect(completions).toEqual(expected);
    expect(pool.snapshot()).toMatchObject({ concurrency: 0, served: 2998, cancelled: 2 });
  });

  it("with cancel-on-disconnect in a lifo queue, skips the cancelled requests it reaches", () => {
    const { clock, pool, completions, arrive } = setUp({ cancelOnDisconnect: true, queueOrder: "lifo" });
    arrive("a");
    arrive("b");
    const c = arrive("c")!;
    pool.abandon(c);
    clock.advanceBy(200);
    expect(completions).toEqual(["a@100", "b@200"]);
  });

  it("keeps its order across thousands of requests taken or cancelled (the queue's storage is compacted)", () => {
    for (const queueOrder of ["fifo", "lifo"] as const) {
      const { clock, pool, completions, arrive } = setUp({ cancelOnDisconnect: true, queueOrder, serviceTimeMs: 1 });
      const tickets = Array.from({ length: 5000 }, (_, index) => arrive(`r${index}`)!);
      for (const ticket of tickets.slice(1, 4001)) pool.abandon(ticket); // r1 … r4000 leave the queue
      expect(pool.snapshot()).toMatchObject({ queueLength: 999, cancelled: 4000 });
      clock.advanceBy(1000);
      const served = completions.map((entry) => Number(entry.slice(1).split("@")[0]));
      const rest = Array.from({ length: 999 }, (_, index) => 4001 + index);
      expect(served).toEqual([0, ...(queueOrder === "fifo" ? rest : rest.reverse())]);
      expect(completions.at(-1)).toBe(`r${queueOrder === "fifo" ? 4999 : 4001}@1000`);
    }
  });

  it("drops a request whose deadline passed while it waited when it reaches a thread, and finishes one already in a thread", () => {
    const { clock, pool, completions, arrive } = setUp();
    arrive("a", 50); // in a thread at once: served although its deadline passes first
    arrive("b", 150); // reaches the thread at 100, before its deadline
    arrive("c", 150); // reaches it at 200, after its deadline: dropped, d starts
    arrive("d");
    clock.advanceBy(300);
    expect(completions).toEqual(["a@100", "b@200", "c:expired@200", "d@300"]);
    expect(pool.snapshot()).toMatchObject({ served: 3, expired: 1 });
    expect(pool.expireOnArrival(clock.now())).toBe(true);
    expect(pool.expireOnArrival(clock.now() + 1)).toBe(false);
    expect(pool.snapshot().expired).toBe(2);
  });

  it("answers injected errors at the rate asked for", () => {
    const { clock, completions, arrive } = setUp({ errorInjection: { rate: 1, random: seededRandom(3) } });
    arrive("a");
    clock.advanceBy(100);
    expect(completions).toEqual(["a:injected-error@100"]);
  });

  it("runs out of memory at -max-in-service requests in the server, waiting or served", () => {
    const { clock, pool, arrive } = setUp({ maxInService: 3 });
    arrive("a");
    arrive("b");
    arrive("c");
    expect(arrive("d")).toBeUndefined();
    expect(pool.outOfMemory).toEqual({ atMs: 0, inService: 3 });
    expect(arrive("e")).toBeUndefined();
    clock.advanceBy(1000);
    expect(pool.snapshot().served).toBe(0); // a dead server answers nothing
  });

  it("draws seeded service times with the mean of -service-time", () => {
    const shape = { ...DEFAULT_THREAD_POOL, serviceTimeMs: 20 };
    for (const serviceDist of ["exponential", "lognormal"] as const) {
      const random = seededRandom(7);
      const draws = Array.from({ length: 20_000 }, () => drawServiceTimeMs({ ...shape, serviceDist, serviceSigma: 0.8 }, 20, random));
      const mean = draws.reduce((sum, value) => sum + value, 0) / draws.length;
      expect(mean).toBeGreaterThan(19);
      expect(mean).toBeLessThan(21);
      expect(new Set(draws).size).toBeGreaterThan(19_000);
    }
    expect(drawServiceTimeMs(shape, 20, seededRandom(7))).toBe(20);
    const again = (seed: number) => drawServiceTimeMs({ ...shape, serviceDist: "exponential" }, 20, seededRandom(seed));
    expect(again(5)).toBe(again(5));
  });

  it("follows a capacity cut and a slow-down from the moment they are set", () => {
    const { clock, pool, completions, arrive } = setUp({ threads: 2 });
    for (const name of ["a", "b", "c", "d"]) arrive(name);
    pool.setThreads(1); // a and b finish in their threads; then one at a time
    pool.setServiceTimeFactor(2);
    clock.advanceBy(500);
    expect(completions).toEqual(["a@100", "b@100", "c@300", "d@500"]);
    pool.setThreads(2);
    expect(pool.snapshot().threads).toBe(2);
  });

  it("has the clients of the next completions warm what they keep elsewhere before the first of them is answered", () => {
    const clock = new ManualClock();
    const pool = testThreadPool(clock, { threads: 40 });
    const warmed: string[] = [];
    const answered: string[] = [];
    const client = (name: string) => ({ name, ...warmProbe(() => warmed.push(name)) });
    const clients = Array.from({ length: 40 }, (_, index) => client(`c${index}`));
    for (const each of clients) pool.admit((who: { name: string }) => answered.push(`${who.name} after ${warmed.length} warmed`), each);
    clock.advanceBy(100);
    // One batch of 32 before the first answer, the next batch when the 33rd comes up.
    expect(answered[0]).toBe("c0 after 32 warmed");
    expect(answered[32]).toBe("c32 after 40 warmed");
    expect(new Set(warmed).size).toBe(40);
  });

  it("gives a later request nothing of an earlier one whose storage it takes over", () => {
    const { clock, pool, completions, arrive } = setUp({ threads: 1, cancelOnDisconnect: true });
    const first = arrive("a", 150)!; // in the thread at once; its deadline is met
    arrive("z"); // waits for a's thread
    clock.advanceBy(100); // a is answered, z takes the thread; b takes over a's storage
    const second = arrive("b")!;
    // b waits past a's deadline and is served: it carries none of a's.
    pool.abandon(first); // a's ticket is gone: b stays where it is
    expect(pool.snapshot()).toMatchObject({ concurrency: 2, queueLength: 1, cancelled: 0 });
    clock.advanceBy(200);
    expect(completions).toEqual(["a@100", "z@200", "b@300"]);
    arrive("c");
    pool.abandon(second); // b was answered: c, which may hold its storage now, stays
    clock.advanceBy(100);
    expect(completions).toEqual(["a@100", "z@200", "b@300", "c@400"]);
    expect(pool.snapshot()).toMatchObject({ served: 4, cancelled: 0, expired: 0 });
  });
});

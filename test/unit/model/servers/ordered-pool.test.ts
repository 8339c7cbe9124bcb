import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import { NORMAL_CONDITIONS } from "../../../../src/model/faults/conditions.ts";
import { createServerModel } from "../../../../src/model/servers/models.ts";
import { OrderedPool } from "../../../../src/model/servers/ordered-pool.ts";
import { DEFAULT_THREAD_POOL, ThreadPool, type ThreadPoolOptions } from "../../../../src/model/servers/queue.ts";
import type { Completion, ServerModel } from "../../../../src/model/servers/server-model.ts";

interface Scenario {
  readonly seed: number;
  readonly threads: number;
  readonly queueLimit: number;
  readonly maxInService: number;
  readonly errorRate: number;
}

/**
 * Runs the same seeded script of arrivals (on whole and fractional milliseconds, so that
 * arrivals and completions often fall on the same instant), immediate re-sends from inside an
 * answer, abandons, capacity and errors faults, a crash and a stop against `pool`, and returns
 * everything an observer of the pool can see: each answer with its instant, what a crash hands
 * back, and the pool's figures after every step.
 */
function trace(make: (clock: ManualClock, options: ThreadPoolOptions) => ServerModel, scenario: Scenario): string[] {
  const clock = new ManualClock();
  const options: ThreadPoolOptions = {
    ...DEFAULT_THREAD_POOL,
    threads: scenario.threads,
    serviceTimeMs: 20,
    queueLimit: scenario.queueLimit,
    cancelOnDisconnect: false,
    maxInService: scenario.maxInService,
    errorInjection: scenario.errorRate > 0 ? { rate: scenario.errorRate, random: seededRandom(scenario.seed + 1000) } : undefined,
    random: seededRandom(7),
  };
  const pool = make(clock, options);
  const script = seededRandom(scenario.seed);
  const log: string[] = [];
  const tickets: number[] = [];
  let named = 0;
  const answer = (name: string, completion: Completion) => {
    log.push(`${name}:${completion}@${clock.now()}`);
    // Inside the answer: a client that retries at once (a fixed retry of 0 ms), sends twice, or another that gives up.
    const roll = script.uniform();
    if (completion !== "served" ? roll < 0.5 : roll < 0.1) arrive();
    if (roll < 0.03) arrive();
    if (roll > 0.97 && tickets.length > 0) pool.abandon(tickets[tickets.length - 1]!);
  };
  const arrive = () => {
    const name = `r${named++}`;
    const ticket = pool.admit(answer, name);
    log.push(`${name}:${ticket === undefined ? "refused" : `ticket ${ticket}`}@${clock.now()}`);
    if (ticket !== undefined) tickets.push(ticket);
  };
  const figures = () => {
    const { concurrency, lastDelayMs, storedRequests, mostStoredRequests, outOfMemory } = pool;
    log.push(JSON.stringify({ snapshot: pool.snapshot(), concurrency, lastDelayMs, storedRequests, mostStoredRequests, outOfMemory }));
  };
  for (let step = 0; step < 600; step++) {
    const roll = script.uniform();
    if (roll < 0.55) arrive();
    // Mostly a recent ticket, which the pool still holds, and now and then one long gone.
    else if (roll < 0.7 && tickets.length > 0) {
      const back =
        script.uniform() < 0.9
          ? Math.floor(script.uniform() * Math.min(10, tickets.length))
          : Math.floor(script.uniform() * tickets.length);
      pool.abandon(tickets[tickets.length - 1 - back]!);
    } else if (roll < 0.75) {
      const capacityFactor = [0.25, 0.5, 1, 2][Math.floor(script.uniform() * 4)]!;
      pool.setFaultConditions({ ...NORMAL_CONDITIONS, capacityFactor, errorRate: script.uniform() < 0.3 ? 0.5 : undefined });
    } else if (roll < 0.76) log.push(`crash: ${JSON.stringify(pool.crash())}`);
    // A burst that holds more requests than the ring's first size, so that it grows and wraps around.
    else if (roll < 0.765) for (let index = 0; index < 1100; index++) arrive();
    // Whole milliseconds put arrivals on the instants where 20 ms services end.
    clock.advanceBy(script.uniform() < 0.5 ? Math.floor(script.uniform() * 12) : script.uniform() * 9);
    figures();
  }
  log.push("stop");
  pool.stop();
  arrive();
  clock.advanceBy(1000);
  figures();
  return log;
}

const thread = (clock: ManualClock, options: ThreadPoolOptions) => new ThreadPool(clock, options);
const ordered = (clock: ManualClock, options: ThreadPoolOptions) => new OrderedPool(clock, options);

describe("OrderedPool (the queue model when requests leave in order)", () => {
  const scenarios: Scenario[] = [
    { seed: 1, threads: 3, queueLimit: Infinity, maxInService: Infinity, errorRate: 0 },
    { seed: 2, threads: 1, queueLimit: 4, maxInService: Infinity, errorRate: 0.2 },
    { seed: 3, threads: 8, queueLimit: 20, maxInService: Infinity, errorRate: 0 },
    { seed: 4, threads: 2, queueLimit: Infinity, maxInService: 900, errorRate: 0.1 },
    { seed: 5, threads: 5, queueLimit: 0, maxInService: Infinity, errorRate: 0 },
  ];
  for (const scenario of scenarios) {
    it(`answers exactly as ThreadPool does, event for event (seed ${scenario.seed}, ${scenario.threads} threads, queue limit ${scenario.queueLimit})`, () => {
      const expected = trace(thread, scenario);
      const actual = trace(ordered, scenario);
      // The script does what it is meant to: requests wait, complete, get refused, are abandoned.
      const text = expected.slice(0, expected.indexOf("stop")).join("\n");
      expect(text).toMatch(/:served@/);
      expect(text).toMatch(/"abandoned":[1-9]/);
      expect(text).toMatch(/^crash: /m);
      expect(text).toMatch(/"abandonedInService":[1-9]/);
      if (scenario.queueLimit > 0) expect(text).toMatch(/"queueLength":[1-9]/);
      if (scenario.queueLimit !== Infinity || scenario.maxInService !== Infinity) expect(text).toMatch(/:refused@/);
      if (scenario.maxInService !== Infinity) expect(text).toMatch(/"outOfMemory":\{/);
      else if (scenario.queueLimit === Infinity)
        expect(Math.max(...[...text.matchAll(/"mostStoredRequests":(\d+)/g)].map((match) => Number(match[1])))).toBeGreaterThan(1024);
      if (scenario.errorRate > 0) expect(text).toMatch(/:injected-error@/);
      expect(actual).toEqual(expected);
    });
  }

  it("answers as ThreadPool does when an answer admits requests into a full ring, which then grows", () => {
    const run = (make: (clock: ManualClock, options: ThreadPoolOptions) => ServerModel) => {
      const clock = new ManualClock();
      const pool = make(clock, {
        ...DEFAULT_THREAD_POOL,
        threads: 4,
        serviceTimeMs: 20,
        cancelOnDisconnect: false,
        random: seededRandom(1),
      });
      const log: string[] = [];
      let resent = false;
      const answer = (name: string) => {
        log.push(`${name}@${clock.now()}`);
        if (name !== "b0" || resent) return;
        resent = true;
        pool.admit(answer, "again-1");
        pool.admit(answer, "again-2");
      };
      // The first 1024 tickets come and go; the next 1024 fill the ring (its first size) to the last slot.
      for (let index = 0; index < 1024; index++) pool.admit(answer, `a${index}`);
      clock.advanceBy(10_000);
      for (let index = 0; index < 1024; index++) pool.admit(answer, `b${index}`);
      clock.advanceBy(10_000);
      return log;
    };
    const expected = run(thread);
    expect(expected.slice(1024, 1028)).toEqual(["b0@10020", "b1@10020", "b2@10020", "b3@10020"]);
    expect(run(ordered)).toEqual(expected);
  });

  it("refuses what would let a later request finish first: a slow fault, a deadline", () => {
    const clock = new ManualClock();
    const pool = new OrderedPool(clock, { ...DEFAULT_THREAD_POOL, cancelOnDisconnect: false, random: seededRandom(1) });
    expect(() => pool.setFaultConditions({ ...NORMAL_CONDITIONS, slowFactor: 2 })).toThrow(/slow fault/);
    expect(() => pool.admit(() => {}, undefined, 50)).toThrow(/deadlines/);
  });

  it("is what createServerModel makes only for a fifo queue of constant service times whose caller promises them fixed", () => {
    const clock = new ManualClock();
    const make = (pool: Partial<typeof DEFAULT_THREAD_POOL>, cancelOnDisconnect: boolean, fixedServiceTime?: boolean) =>
      createServerModel({ kind: "queue", pool: { ...DEFAULT_THREAD_POOL, ...pool } }, clock, {
        cancelOnDisconnect,
        maxConcurrency: Infinity,
        serviceRandom: seededRandom(1),
        ...(fixedServiceTime === undefined ? {} : { fixedServiceTime }),
      });
    expect(make({}, false, true)).toBeInstanceOf(OrderedPool);
    expect(make({}, false)).toBeInstanceOf(ThreadPool);
    expect(make({}, false, false)).toBeInstanceOf(ThreadPool);
    expect(make({}, true, true)).toBeInstanceOf(ThreadPool);
    expect(make({ queueOrder: "lifo" }, false, true)).toBeInstanceOf(ThreadPool);
    expect(make({ serviceDist: "exponential" }, false, true)).toBeInstanceOf(ThreadPool);
  });
});

import { describe, expect, it } from "vitest";
import type { LatencyModel } from "../../../src/model/latency.ts";
import { exponentialCurve } from "../../../src/model/servers/kinds/exponential.ts";
import { boundDelay } from "../../../src/model/servers/delay-models.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { type Completion, ServiceQueue, type ServiceQueueOptions } from "../../../src/model/service-queue.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

/** limit 1, factor 2, K 1: delay(c) = 100 * 2^(c-1) above one request, easy to follow by hand. */
const STEEP: LatencyModel = { baseDelayMs: 100, limit: 1, factor: 2, exponentDivisor: 1 };

function setUp(overrides: Partial<ServiceQueueOptions> = {}) {
  const clock = new ManualClock();
  const queue = new ServiceQueue(clock, {
    delay: boundDelay(exponentialCurve, STEEP),
    cancelOnDisconnect: false,
    maxConcurrency: Infinity,
    ...overrides,
  });
  const completions: string[] = [];
  const arrive = (name: string) => queue.admit(() => completions.push(`${name}@${clock.now()}`));
  return { clock, queue, completions, arrive };
}

describe("ServiceQueue", () => {
  it("answers a lone request after baseDelay exactly", () => {
    const { clock, completions, arrive } = setUp();
    arrive("a");
    clock.advanceBy(99.999);
    expect(completions).toEqual([]);
    clock.advanceBy(0.001);
    expect(completions).toEqual(["a@100"]);
  });

  it("postpones the oldest request when concurrency rises while it waits", () => {
    const { clock, completions, arrive, queue } = setUp();
    arrive("a");
    clock.advanceBy(50);
    arrive("b"); // c = 2: delay 200, so a is now due at 200, not 100
    clock.advanceBy(100);
    expect(completions).toEqual([]);
    expect(queue.lastDelayMs).toBe(200);
    clock.runUntil(200);
    // a leaves at 200; c drops to 1, delay 100, and b (age 150) leaves at the same instant.
    expect(completions).toEqual(["a@200", "b@200"]);
    expect(queue.concurrency).toBe(0);
  });

  describe("one server over several processes (shareConcurrency)", () => {
    it("delays its requests by the whole server's concurrency, the other processes' included", () => {
      const { clock, completions, arrive, queue } = setUp();
      queue.shareConcurrency(2);
      arrive("a"); // c = 1 + 2 others: delay 400
      expect(queue.lastDelayMs).toBe(400);
      expect(queue.concurrency).toBe(1);
      clock.advanceBy(399);
      expect(completions).toEqual([]);
      clock.runAll();
      expect(completions).toEqual(["a@400"]);
    });

    it("lets a request go at once when the other processes' requests leave after it was due", () => {
      const { clock, completions, arrive, queue } = setUp();
      queue.shareConcurrency(3);
      arrive("a"); // c = 4: delay 800
      clock.advanceBy(150);
      queue.shareConcurrency(0); // c = 1: delay 100, and a is 150 old
      expect(completions).toEqual(["a@150"]);
      expect(queue.lastDelayMs).toBe(100);
    });

    it("postpones the head when the other processes take more", () => {
      const { clock, completions, arrive, queue } = setUp();
      arrive("a"); // alone: due at 100
      clock.advanceBy(50);
      queue.shareConcurrency(1); // c = 2: delay 200
      expect(queue.lastDelayMs).toBe(200); // what the line and the metrics read, at once
      clock.runUntil(199);
      expect(completions).toEqual([]);
      clock.runAll();
      expect(completions).toEqual(["a@200"]);
    });
  });

  it("releases several requests at once when a completion lowers the delay", () => {
    const { clock, completions, arrive } = setUp();
    arrive("a");
    clock.advanceBy(10);
    arrive("b");
    clock.advanceBy(10);
    arrive("c"); // c = 3: delay 400; a due at 400
    clock.runAll();
    // At 400 a leaves (c=2, delay 200: b aged 390 leaves; c=1, delay 100: c aged 380 leaves).
    expect(completions).toEqual(["a@400", "b@400", "c@400"]);
  });

  it("keeps an abandoned request in service until its delay passes (the reference behaviour)", () => {
    const { clock, completions, arrive, queue } = setUp();
    const a = arrive("a")!;
    arrive("b");
    clock.advanceBy(50);
    queue.abandon(a);
    expect(queue.concurrency).toBe(2);
    expect(queue.snapshot().abandonedInService).toBe(1);
    clock.runAll();
    expect(completions).toEqual(["b@200"]);
    expect(queue.snapshot()).toMatchObject({ served: 1, abandoned: 1, abandonedInService: 0, cancelled: 0, concurrency: 0 });
  });

  it("with cancel-on-disconnect frees the slot at once, so the others finish sooner", () => {
    const outcomes = (cancelOnDisconnect: boolean) => {
      const { clock, completions, arrive, queue } = setUp({ cancelOnDisconnect });
      arrive("a");
      arrive("b");
      const c = arrive("c")!; // c = 3: delay 400
      clock.advanceBy(150);
      queue.abandon(c); // with cancelling: c = 2, delay 200
      clock.runAll();
      return { completions, snapshot: queue.snapshot() };
    };
    const kept = outcomes(false);
    expect(kept.completions).toEqual(["a@400", "b@400"]);
    expect(kept.snapshot).toMatchObject({ served: 2, abandoned: 1, cancelled: 0 });
    const cancelled = outcomes(true);
    // At 200 a leaves; c drops to 1 and b, 200 old, leaves at the same instant.
    expect(cancelled.completions).toEqual(["a@200", "b@200"]);
    expect(cancelled.snapshot).toMatchObject({ served: 2, abandoned: 0, cancelled: 1 });
  });

  it("cancelling the requests ahead makes an overdue request complete at that instant", () => {
    const { clock, completions, arrive, queue } = setUp({ cancelOnDisconnect: true });
    const a = arrive("a")!;
    const b = arrive("b")!;
    arrive("c"); // delay 400
    clock.advanceBy(250);
    queue.abandon(a); // c = 2: delay 200; b and c are 250 old -> b leaves, then c (delay 100)
    expect(completions).toEqual(["b@250", "c@250"]);
    queue.abandon(b); // already completed: no effect
    expect(queue.snapshot()).toMatchObject({ served: 2, cancelled: 1, abandoned: 0, concurrency: 0 });
  });

  it("sheds load above the maximum concurrency", () => {
    const { arrive, queue, clock, completions } = setUp({ maxConcurrency: 2 });
    expect(arrive("a")).toBeDefined();
    expect(arrive("b")).toBeDefined();
    expect(arrive("c")).toBeUndefined();
    clock.runAll();
    expect(completions).toEqual(["a@200", "b@200"]);
    expect(queue.snapshot()).toMatchObject({ shed: 1, served: 2, peakConcurrency: 2 });
  });

  it("never completes early however large the delay grows, and never produces NaN", () => {
    const clock = new ManualClock();
    const latency: LatencyModel = { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 };
    const queue = new ServiceQueue(clock, {
      delay: boundDelay(exponentialCurve, latency),
      cancelOnDisconnect: true,
      maxConcurrency: Infinity,
    });
    const tickets = [];
    let completed = 0;
    for (let index = 0; index < 300_000; index++) tickets.push(queue.admit(() => completed++)!);
    expect(queue.lastDelayMs).toBe(Infinity);
    clock.advanceBy(1e15); // 30 000 years
    expect(completed).toBe(0);
    // 100 000 in service: a delay of about 1e143 ms, far beyond Go's int64, finite and not due.
    for (let index = 100_000; index < tickets.length; index++) queue.abandon(tickets[index]!);
    expect(queue.concurrency).toBe(100_000);
    expect(queue.lastDelayMs).toBeGreaterThan(1e140);
    expect(Number.isFinite(queue.lastDelayMs)).toBe(true);
    clock.advanceBy(1e15);
    expect(completed).toBe(0);
    // Cancel from the newest down: the first concurrency whose delay fits in the 2e15 ms
    // waited releases the head, and then every other request, each lowering the delay.
    let cascadeAt = 100_000;
    while (cascadeAt > 0 && !(clock.now() >= latency.baseDelayMs * 1.05 ** ((cascadeAt - 30) / 15))) cascadeAt--;
    for (let index = 99_999; index >= 0 && completed === 0; index--) queue.abandon(tickets[index]!);
    expect(completed).toBe(cascadeAt);
    expect(queue.concurrency).toBe(0);
  });

  it("does O(1) timer work per arrival: arrivals do not re-arm an armed timer", () => {
    const clock = new ManualClock();
    const queue = new ServiceQueue(clock, {
      delay: boundDelay(exponentialCurve, STEEP),
      cancelOnDisconnect: false,
      maxConcurrency: Infinity,
    });
    for (let index = 0; index < 1000; index++) queue.admit();
    clock.runAll();
    // One timer per head re-check: far fewer than one per arrival-and-completion pair.
    expect(clock.firedCount).toBeLessThan(10);
    expect(queue.snapshot().served).toBe(1000);
  });

  it("counts rather than stores the requests that cannot complete before the horizon, with the same results", () => {
    // The same arrivals and abandons on a queue with a horizon and on one without: up to
    // the horizon, the same completions at the same instants, the same concurrency and
    // delay at every step; the one with the horizon stores nothing once its head is stuck.
    const latency: LatencyModel = { baseDelayMs: 100, limit: 10, factor: 1.5, exponentDivisor: 5 }; // finite up to c = 8 700
    const horizonMs = 60_000;
    const run = (withHorizon: boolean) => {
      const clock = new ManualClock();
      const queue = new ServiceQueue(clock, {
        delay: boundDelay(exponentialCurve, latency),
        cancelOnDisconnect: false,
        maxConcurrency: Infinity,
        ...(withHorizon ? { horizonMs } : {}),
      });
      const random = seededRandom(42);
      const completions: string[] = [];
      const trace: string[] = [];
      let mostStored = 0;
      let step = 0;
      while (clock.now() < horizonMs) {
        // Calm for 20 s (about 2 in service), then a storm that drives the delay up.
        const meanGapMs = clock.now() < 20_000 ? 50 : 10;
        clock.advanceBy(Math.min(random.exponential(meanGapMs), horizonMs - clock.now()));
        const name = step++;
        const ticket = queue.admit(() => completions.push(`${name}@${clock.now()}`))!;
        if (random.uniform() < 0.8) queue.abandon(ticket); // most clients give up
        trace.push(`${queue.concurrency}/${queue.lastDelayMs}/${completions.length}`);
        mostStored = Math.max(mostStored, queue.storedRequests);
      }
      return { completions, trace, mostStored, queue, snapshot: queue.snapshot() };
    };
    const exact = run(false);
    const counted = run(true);
    expect(counted.completions).toEqual(exact.completions);
    expect(counted.trace).toEqual(exact.trace);
    expect(counted.snapshot).toEqual(exact.snapshot);
    expect(exact.snapshot.served + exact.snapshot.abandoned).toBeGreaterThan(300); // it served a while before it collapsed
    expect(exact.queue.concurrency).toBeGreaterThan(1_000);
    expect(exact.queue.countedRequests).toBe(0); // its delay stayed finite: it stored them all
    expect(Number.isFinite(exact.queue.lastDelayMs)).toBe(true);
    expect(counted.queue.countedRequests).toBe(counted.queue.concurrency);
    expect(counted.queue.storedRequests).toBe(0);
    expect(counted.mostStored).toBeLessThan(100);
  });

  it("stores a request that completes exactly at the horizon, and counts once the head's completion is past it", () => {
    const outcome = (horizonMs: number) => {
      const { clock, queue, completions } = setUp({ horizonMs });
      for (const name of ["a", "b", "c", "d"]) {
        queue.admit(() => completions.push(`${name}@${clock.now()}`));
        clock.advanceBy(10);
      }
      // c = 4: delay 800, so a (arrived at 0) is due at 800 and then the rest with it.
      clock.runUntil(horizonMs);
      return { completions, counted: queue.countedRequests, concurrency: queue.concurrency };
    };
    expect(outcome(800)).toEqual({ completions: ["a@800", "b@800", "c@800", "d@800"], counted: 0, concurrency: 0 });
    expect(outcome(799.99)).toEqual({ completions: [], counted: 4, concurrency: 4 });
    const { clock, queue } = setUp({ horizonMs: 1_000 });
    for (let index = 0; index < 4; index++) queue.admit();
    expect(queue.countedRequests).toBe(0); // due at 800: inside the horizon
    queue.admit(); // c = 5: delay 1 600, the head is due at 1 600
    expect(queue.countedRequests).toBe(5);
    expect(queue.storedRequests).toBe(0);
    clock.runUntil(1_000);
    expect(queue.snapshot()).toMatchObject({ concurrency: 5, served: 0, lastDelayMs: 1_600, peakConcurrency: 5 });
  });

  it("counts requests once their delay is infinite, also without a horizon (a real server)", () => {
    const clock = new ManualClock();
    const latency: LatencyModel = { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 };
    const queue = new ServiceQueue(clock, {
      delay: boundDelay(exponentialCurve, latency),
      cancelOnDisconnect: false,
      maxConcurrency: Infinity,
    });
    for (let index = 0; index < 300_000; index++) queue.admit();
    expect(queue.lastDelayMs).toBe(Infinity);
    expect(queue.concurrency).toBe(300_000);
    expect(queue.storedRequests).toBeLessThan(250_000); // stored until the delay overflowed, then counted
    expect(queue.countedRequests).toBe(300_000 - queue.storedRequests);
    const stored = queue.storedRequests;
    for (let index = 0; index < 1_000; index++) queue.admit();
    expect(queue.storedRequests).toBe(stored === 0 ? 0 : stored);
    expect(queue.countedRequests + queue.storedRequests).toBe(301_000);
  });

  it("with cancel-on-disconnect never counts: a cancellation can bring the delay down again", () => {
    const clock = new ManualClock();
    const queue = new ServiceQueue(clock, {
      delay: boundDelay(exponentialCurve, STEEP),
      cancelOnDisconnect: true,
      maxConcurrency: Infinity,
      horizonMs: 1_000,
    });
    const tickets = [queue.admit(), queue.admit(), queue.admit(), queue.admit(), queue.admit()]; // delay 1 600 ms
    expect(queue.countedRequests).toBe(0);
    for (const ticket of tickets.slice(1)) queue.abandon(ticket!);
    clock.runUntil(1_000);
    expect(queue.snapshot()).toMatchObject({ served: 1, cancelled: 4, concurrency: 0 });
  });

  it("runs out of memory at maxInService: refuses from then on and completes nothing more", () => {
    const { clock, queue, completions } = setUp({ maxInService: 3 });
    const arrive = (name: string) => queue.admit(() => completions.push(`${name}@${clock.now()}`));
    expect(arrive("a")).toBeDefined();
    expect(arrive("b")).toBeDefined();
    expect(arrive("c")).toBeDefined();
    expect(queue.outOfMemory).toBeUndefined();
    clock.advanceBy(50);
    expect(arrive("d")).toBeUndefined();
    expect(queue.outOfMemory).toEqual({ atMs: 50, inService: 3 });
    expect(arrive("e")).toBeUndefined();
    clock.runAll();
    expect(completions).toEqual([]);
    expect(queue.snapshot()).toMatchObject({ admitted: 3, concurrency: 3, shed: 0 });
  });

  it("sheds before it runs out of memory when the shedding limit is lower", () => {
    const { queue } = setUp({ maxConcurrency: 2, maxInService: 2 });
    queue.admit();
    queue.admit();
    expect(queue.admit()).toBeUndefined();
    expect(queue.outOfMemory).toBeUndefined();
    expect(queue.snapshot().shed).toBe(1);
  });

  it("re-arms its timer only when the head falls due sooner: cancellations leave no trail of stale timers", () => {
    class CountingClock extends ManualClock {
      arms = 0;
      override arm(owner: Parameters<ManualClock["arm"]>[0], delayMs: number): void {
        this.arms++;
        super.arm(owner, delayMs);
      }
    }
    const clock = new CountingClock();
    const flat: LatencyModel = { baseDelayMs: 100, limit: 1, factor: 1, exponentDivisor: 1 };
    const queue = new ServiceQueue(clock, {
      delay: boundDelay(exponentialCurve, flat),
      cancelOnDisconnect: true,
      maxConcurrency: Infinity,
    });
    const completed: number[] = [];
    const tickets: number[] = [];
    for (let index = 0; index < 1_000; index++) {
      tickets.push(queue.admit(() => completed.push(clock.now()))!);
      clock.advanceBy(0.01);
    }
    for (let index = 0; index < 999; index++) queue.abandon(tickets[index]!); // the head each time: the next is due later
    expect(clock.arms).toBe(1);
    clock.runAll();
    expect(completed).toHaveLength(1);
    expect(completed[0]).toBeCloseTo(999 * 0.01 + 100, 9); // the last one, exactly when due
    // With a growing delay a cancellation brings the head's time forward: then it must re-arm.
    const steep = setUp({ cancelOnDisconnect: true });
    const first = steep.arrive("a");
    const second = steep.arrive("b"); // delay 200
    steep.queue.abandon(second!); // delay 100 again: a is due at 100, not 200
    steep.clock.advanceBy(100);
    expect(steep.completions).toEqual(["a@100"]);
    expect(first).toBe(0);
  });
  describe("error injection", () => {
    it("answers exactly the requests whose seeded draw falls below the rate, after the modelled delay", () => {
      const { clock, queue } = setUp({ errorInjection: { rate: 0.3, random: seededRandom(42) } });
      const answers: string[] = [];
      for (let index = 0; index < 200; index++) {
        queue.admit((name: number, completion: Completion) => answers.push(`${name}:${completion}@${clock.now()}`), index);
        clock.runAll();
      }
      // One draw per answered request, in the order of completion.
      const replay = seededRandom(42);
      const expected = Array.from(
        { length: 200 },
        (_, index) => `${index}:${replay.uniform() < 0.3 ? "injected-error" : "served"}@${(index + 1) * 100}`,
      );
      expect(answers).toEqual(expected);
      const injected = answers.filter((answer) => answer.includes("injected-error")).length;
      expect(queue.snapshot()).toMatchObject({ served: 200, errorsInjected: injected });
      // Binomial(200, 0.3): mean 60, standard deviation 6.5; the seed's count lies within 4 of them.
      expect(Math.abs(injected - 60)).toBeLessThan(4 * 6.5);
    });

    it("draws nothing for abandoned requests, and nothing at all at rate 0", () => {
      let draws = 0;
      const counting = { ...seededRandom(1), uniform: () => (draws++, 0.5) };
      const { clock, queue } = setUp({ errorInjection: { rate: 0, random: counting } });
      queue.admit();
      clock.runAll();
      expect(draws).toBe(0);
      const injecting = setUp({ errorInjection: { rate: 0.6, random: counting } });
      const kept = injecting.queue.admit();
      const left = injecting.queue.admit()!;
      injecting.queue.abandon(left);
      injecting.clock.runAll();
      expect(kept).toBeDefined();
      expect(draws).toBe(1);
      expect(injecting.queue.snapshot()).toMatchObject({ served: 1, abandoned: 1, errorsInjected: 1 });
    });
  });

  describe("deadlines", () => {
    function withDeadlines(overrides: Partial<ServiceQueueOptions> = {}) {
      const setup = setUp(overrides);
      const events: string[] = [];
      const arrive = (name: string, deadlineAt: number) =>
        setup.queue.admit(
          (label: string, completion: Completion) => events.push(`${label}:${completion}@${setup.clock.now()}`),
          name,
          deadlineAt,
        );
      return { ...setup, events, arrive };
    }

    it("takes a request out of service at its deadline exactly, and the others speed up", () => {
      const { clock, queue, events, arrive } = withDeadlines();
      arrive("a", 1_000);
      arrive("b", 150); // c = 2: delay 200, so b would complete at 200
      clock.advanceBy(149.999);
      expect(events).toEqual([]);
      expect(queue.concurrency).toBe(2);
      clock.advanceBy(0.001);
      // At 150 b expires; c = 1, delay 100, and a (150 old) completes at the same instant.
      expect(events).toEqual(["b:expired@150", "a:served@150"]);
      expect(queue.snapshot()).toMatchObject({ concurrency: 0, served: 1, expired: 1, abandoned: 0, cancelled: 0 });
    });

    it("lets the deadline win over a completion due at the same instant", () => {
      const { clock, queue, events, arrive } = withDeadlines();
      arrive("a", 100);
      clock.runAll();
      expect(events).toEqual(["a:expired@100"]);
      expect(queue.snapshot()).toMatchObject({ served: 0, expired: 1 });
    });

    it("expires deadlines in any order, and leaves requests that completed in time alone", () => {
      const { clock, queue, events, arrive } = withDeadlines();
      arrive("a", 350);
      arrive("b", 250);
      arrive("c", 5_000); // c = 3: delay 400
      arrive("d", 300); // c = 4: delay 800
      clock.runAll();
      // 250: b leaves (c = 3, delay 400); 300: d leaves (c = 2, delay 200): a and c, 300 old, complete.
      expect(events).toEqual(["b:expired@250", "d:expired@300", "a:served@300", "c:served@300"]);
      expect(queue.snapshot()).toMatchObject({ served: 2, expired: 2, concurrency: 0 });
      expect(clock.nextDueAt()).toBeUndefined();
    });

    it("counts an abandoned request that reaches its deadline as expired, without answering it", () => {
      const { clock, queue, events, arrive } = withDeadlines();
      const ticket = arrive("a", 60)!;
      clock.advanceBy(30);
      queue.abandon(ticket); // the reference keeps it in service
      expect(queue.snapshot().abandonedInService).toBe(1);
      clock.runAll();
      expect(events).toEqual([]);
      expect(queue.snapshot()).toMatchObject({ abandoned: 0, abandonedInService: 0, expired: 1, concurrency: 0 });
    });

    it("counts a cancelled request once, as cancelled", () => {
      const { clock, queue, arrive } = withDeadlines({ cancelOnDisconnect: true });
      const ticket = arrive("a", 60)!;
      queue.abandon(ticket);
      clock.runAll();
      expect(queue.snapshot()).toMatchObject({ cancelled: 1, expired: 0 });
    });

    it("refuses a request whose deadline has already passed, counting it as expired", () => {
      const { clock, queue } = withDeadlines();
      clock.advanceBy(500);
      expect(queue.expireOnArrival(500)).toBe(true);
      expect(queue.expireOnArrival(500.001)).toBe(false);
      expect(queue.snapshot()).toMatchObject({ expired: 1, admitted: 0, concurrency: 0 });
    });
  });
});

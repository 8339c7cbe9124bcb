import { describe, expect, it } from "vitest";
import type { LatencyModel } from "../../../src/model/latency.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { type Completion, ServiceQueue, type ServiceQueueOptions } from "../../../src/model/service-queue.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

/** limit 1, factor 2, K 1: delay(c) = 100 * 2^(c-1) above one request, easy to follow by hand. */
const STEEP: LatencyModel = { baseDelayMs: 100, limit: 1, factor: 2, exponentDivisor: 1 };

function setUp(overrides: Partial<ServiceQueueOptions> = {}) {
  const clock = new ManualClock();
  const queue = new ServiceQueue(clock, {
    latency: STEEP,
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
    const queue = new ServiceQueue(clock, { latency, cancelOnDisconnect: true, maxConcurrency: Infinity });
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
    const queue = new ServiceQueue(clock, { latency: STEEP, cancelOnDisconnect: false, maxConcurrency: Infinity });
    for (let index = 0; index < 1000; index++) queue.admit();
    clock.runAll();
    // One timer per head re-check: far fewer than one per arrival-and-completion pair.
    expect(clock.firedCount).toBeLessThan(10);
    expect(queue.snapshot().served).toBe(1000);
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

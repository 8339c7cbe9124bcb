import { describe, expect, it } from "vitest";
import type { LatencyModel } from "../../../src/model/latency.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { ServiceQueue, type ServiceQueueOptions } from "../../../src/model/service-queue.ts";

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
    clock.runAll();
    expect(completions).toEqual(["b@200"]);
    expect(queue.snapshot()).toMatchObject({ served: 1, abandoned: 1, cancelled: 0, concurrency: 0 });
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
});

import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import type { Completion, ServiceTicket } from "../../../../src/model/servers/server-model.ts";
import { DEFAULT_THREAD_POOL, drawServiceTimeMs, type ThreadPoolOptions } from "../../../../src/model/servers/queue.ts";
import { type UpstreamCallEnd, UpstreamPool } from "../../../../src/model/servers/upstream-pool.ts";

/**
 * A middle tier of one thread with a constant 100 ms service time of its own, unless told
 * otherwise. The caller records when each call starts and is cancelled; `endCall` reports it
 * ended; `endAtOnce` makes calls end while they are being started.
 */
function setUp(overrides: Partial<ThreadPoolOptions> = {}, endAtOnce?: UpstreamCallEnd) {
  const clock = new ManualClock();
  const calls: string[] = [];
  const ticketOf = new Map<string, ServiceTicket>();
  const nameOf = new Map<ServiceTicket, string>();
  const pool: UpstreamPool = new UpstreamPool(
    clock,
    { ...DEFAULT_THREAD_POOL, threads: 1, serviceTimeMs: 100, cancelOnDisconnect: false, random: seededRandom(1), ...overrides },
    {
      startCall(ticket, context, deadlineAt) {
        const deadline = Number.isFinite(deadlineAt) ? ` (deadline ${deadlineAt})` : "";
        calls.push(`call ${String(context)}@${clock.now()}${deadline}`);
        if (endAtOnce !== undefined) pool.callEnded(ticket, endAtOnce);
      },
      cancelCall(ticket) {
        calls.push(`cancel ${nameOf.get(ticket)}@${clock.now()}`);
      },
    },
  );
  const completions: string[] = [];
  const record = (name: string, completion: Completion) =>
    completions.push(completion === "served" ? `${name}@${clock.now()}` : `${name}:${completion}@${clock.now()}`);
  const arrive = (name: string, deadlineAt?: number) => {
    const ticket = pool.admit(record, name, deadlineAt);
    if (ticket !== undefined) {
      ticketOf.set(name, ticket);
      nameOf.set(ticket, name);
    }
    return ticket;
  };
  const endCall = (name: string, end: UpstreamCallEnd) => pool.callEnded(ticketOf.get(name)!, end);
  return { clock, pool, calls, completions, arrive, endCall, ticketOf };
}

describe("UpstreamPool (a middle tier's threads, held while the upstream call runs)", () => {
  it("holds the thread through the call, then serves its own time; a failed call answers at once", () => {
    const { clock, pool, calls, completions, arrive, endCall } = setUp();
    arrive("a");
    arrive("b");
    expect(calls).toEqual(["call a@0"]);
    expect(pool.snapshot()).toMatchObject({ concurrency: 2, queueLength: 1, threadsBusy: 1, upstream: { inFlight: 1 } });
    clock.advanceBy(50);
    endCall("a", "ok"); // a's own 100 ms start now; b still waits for the thread
    clock.advanceBy(99.999);
    expect(completions).toEqual([]);
    clock.advanceBy(0.001);
    expect(completions).toEqual(["a@150"]);
    expect(calls).toEqual(["call a@0", "call b@150"]);
    clock.advanceBy(20);
    endCall("b", "failed");
    expect(completions).toEqual(["a@150", "b:upstream-failed@170"]);
    expect(pool.lastDelayMs).toBe(170);
    expect(pool.snapshot()).toMatchObject({
      concurrency: 0,
      served: 1,
      threadsBusy: 0,
      upstream: { failures: 1, inFlight: 0 },
    });
  });

  it("fills its threads and then its queue while the upstream is slow, and sheds beyond the queue limit", () => {
    const { clock, pool, calls, completions, arrive, endCall } = setUp({ threads: 2, queueLimit: 2 });
    for (const name of ["a", "b", "c", "d"]) expect(arrive(name)).toBeDefined();
    expect(arrive("e")).toBeUndefined();
    expect(pool.snapshot()).toMatchObject({ threadsBusy: 2, queueLength: 2, shed: 1, upstream: { inFlight: 2 } });
    clock.advanceBy(1000); // the upstream has not answered: nothing moves
    expect(completions).toEqual([]);
    endCall("b", "ok");
    clock.advanceBy(100);
    expect(completions).toEqual(["b@1100"]);
    expect(calls).toEqual(["call a@0", "call b@0", "call c@1100"]);
  });

  it("gives a free thread the newest waiting request (lifo)", () => {
    const { clock, calls, arrive, endCall } = setUp({ queueOrder: "lifo" });
    for (const name of ["a", "b", "c"]) arrive(name);
    clock.advanceBy(10);
    endCall("a", "failed");
    expect(calls).toEqual(["call a@0", "call c@10"]);
  });

  it("draws its own service times from the seed as the queue model does, after each call", () => {
    const { clock, completions, arrive, endCall } = setUp({ serviceDist: "exponential", random: seededRandom(9) });
    const random = seededRandom(9);
    const shape = { ...DEFAULT_THREAD_POOL, serviceDist: "exponential" as const };
    const first = drawServiceTimeMs(shape, 100, random);
    const second = drawServiceTimeMs(shape, 100, random);
    arrive("a");
    arrive("b");
    clock.advanceBy(10);
    endCall("a", "ok");
    clock.advanceBy(first);
    expect(completions).toEqual([`a@${10 + first}`]);
    clock.advanceBy(5);
    endCall("b", "ok");
    clock.advanceBy(second);
    expect(completions).toEqual([`a@${10 + first}`, `b@${15 + first + second}`]);
  });

  it("makes no call for a request whose deadline passed while it waited; an owner that gave up at the deadline answers expired", () => {
    const { clock, pool, calls, completions, arrive, endCall } = setUp();
    arrive("a", 500);
    arrive("b", 50);
    arrive("c");
    expect(calls).toEqual(["call a@0 (deadline 500)"]);
    clock.advanceBy(100);
    endCall("a", "expired");
    expect(completions).toEqual(["a:expired@100", "b:expired@100"]);
    expect(calls).toEqual(["call a@0 (deadline 500)", "call c@100"]); // b never called upstream
    expect(pool.snapshot()).toMatchObject({ expired: 2, served: 0 });
  });

  it("keeps a gone client's request and its call: the answer is work for nobody", () => {
    const { clock, pool, calls, completions, arrive, endCall, ticketOf } = setUp();
    arrive("a");
    arrive("b");
    clock.advanceBy(30);
    pool.abandon(ticketOf.get("a")!);
    pool.abandon(ticketOf.get("b")!);
    expect(pool.snapshot()).toMatchObject({ concurrency: 2, abandonedInService: 2 });
    endCall("a", "ok");
    clock.advanceBy(100);
    expect(calls).toEqual(["call a@0", "call undefined@130"]); // b's call goes on, for nobody (its context is gone)
    endCall("b", "failed");
    expect(completions).toEqual([]);
    expect(pool.snapshot()).toMatchObject({ abandoned: 2, abandonedInService: 0, served: 0, upstream: { failures: 1 } });
  });

  it("with cancel-on-disconnect cancels the call of a request whose client left, and frees its thread at once", () => {
    const { clock, pool, calls, completions, arrive, endCall, ticketOf } = setUp({ cancelOnDisconnect: true });
    arrive("a");
    arrive("b");
    clock.advanceBy(30);
    pool.abandon(ticketOf.get("a")!);
    expect(calls).toEqual(["call a@0", "call b@30", "cancel a@30"]);
    endCall("a", "ok"); // too late: ignored
    endCall("b", "ok");
    clock.advanceBy(100);
    expect(completions).toEqual(["b@130"]);
    expect(pool.snapshot()).toMatchObject({ cancelled: 1, served: 1, upstream: { inFlight: 0 } });
  });

  it("with cancel-on-disconnect ignores a call's end reported while its request is being taken out", () => {
    const { clock, pool, calls, arrive, ticketOf } = setUp({ cancelOnDisconnect: true });
    arrive("a");
    // b waits with a deadline; its expiry answer, given while a's request is taken out, reports a's call ended.
    pool.admit(() => pool.callEnded(ticketOf.get("a")!, "failed"), "b", 10);
    clock.advanceBy(20);
    pool.abandon(ticketOf.get("a")!);
    expect(calls).toEqual(["call a@0", "cancel a@20"]);
    expect({ stored: pool.storedRequests, busy: pool.threadsBusy, lastDelayMs: pool.lastDelayMs }).toEqual({
      stored: 0,
      busy: 0,
      lastDelayMs: 0,
    });
    expect(pool.snapshot()).toMatchObject({ cancelled: 1, expired: 1, upstream: { failures: 0, inFlight: 0 } });
  });

  it("cancels every call in flight when it crashes or stops, and ignores their late ends", () => {
    const crashed = setUp({ threads: 2 });
    crashed.arrive("a");
    crashed.arrive("b");
    crashed.arrive("c");
    expect(crashed.pool.crash()).toEqual(["a", "b", "c"]);
    expect(crashed.calls).toEqual(["call a@0", "call b@0", "cancel a@0", "cancel b@0"]);
    crashed.endCall("a", "ok");
    crashed.clock.advanceBy(1000);
    expect(crashed.completions).toEqual([]);
    expect(crashed.pool.snapshot()).toMatchObject({ concurrency: 0, upstream: { inFlight: 0 } });

    const stopped = setUp();
    stopped.arrive("a");
    stopped.pool.stop();
    expect(stopped.calls).toEqual(["call a@0", "cancel a@0"]);
    expect(stopped.arrive("b")).toBeUndefined();
  });

  it("takes calls that end while being started at the same instant, one after another, without nesting", () => {
    const { clock, pool, calls, completions, arrive } = setUp({ threads: 1 }, "failed");
    for (const name of ["a", "b", "c"]) arrive(name);
    expect(completions).toEqual([]);
    clock.advanceBy(0);
    expect(completions).toEqual(["a:upstream-failed@0", "b:upstream-failed@0", "c:upstream-failed@0"]);
    expect(calls).toEqual(["call a@0", "call b@0", "call c@0"]);
    expect(pool.snapshot()).toMatchObject({ concurrency: 0, upstream: { failures: 3 } });
  });

  it("serves the errors of a fault after its own service time, and slows its own service under a slow fault", () => {
    const { clock, pool, completions, arrive, endCall } = setUp({ errorInjection: { rate: 0, random: seededRandom(3) } });
    pool.setFaultConditions({ capacityFactor: 1, slowFactor: 2, errorRate: 1 });
    arrive("a");
    endCall("a", "ok");
    clock.advanceBy(200);
    expect(completions).toEqual(["a:injected-error@200"]);
  });

  it("counts the attempts its owner sends and how they ended, apart from those it refused itself", () => {
    const { pool } = setUp();
    for (const isRetry of [false, true, true]) pool.attemptSent(isRetry);
    for (const outcome of ["ok", "error", "timedout", "rejected", "throttled"] as const) pool.attemptEnded(outcome);
    expect(pool.snapshot().upstream).toEqual({
      requests: 1,
      attempts: 3,
      attemptsOk: 1,
      attemptsError: 1,
      attemptsTimedout: 1,
      refused: 2,
      failures: 0,
      inFlight: 0,
    });
  });
});

import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import type { AttemptResult } from "../../../src/model/outcome.ts";
import { ServiceQueue, type ServiceQueueOptions } from "../../../src/model/service-queue.ts";
import { IMMEDIATE_ANSWER_MS, type NetworkOptions, SimulatedNetwork } from "../../../src/runner/network.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { exponentialCurve } from "../../../src/model/servers/kinds/exponential.ts";
import { boundDelay } from "../../../src/model/servers/delay-models.ts";

function setUp(
  backlog: number,
  cancelOnDisconnect = false,
  queueOptions: Partial<ServiceQueueOptions> = {},
  networkOptions: (clock: ManualClock) => NetworkOptions = () => ({}),
) {
  const clock = new ManualClock();
  const queue = new ServiceQueue(clock, {
    delay: boundDelay(exponentialCurve, { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 }),
    cancelOnDisconnect,
    maxConcurrency: Infinity,
    ...queueOptions,
  });
  const network = new SimulatedNetwork(queue, clock, backlog, networkOptions(clock));
  const results: AttemptResult[] = [];
  const send = () => network.transport.send({ done: (result) => results.push(result), notSent: () => {} });
  const abort = network.transport.abort;
  return { clock, queue, network, results, send, abort };
}

describe("SimulatedNetwork", () => {
  it("serves at once while the server runs", () => {
    const { clock, queue, results, send } = setUp(10);
    send();
    expect(queue.concurrency).toBe(1);
    clock.advanceBy(100);
    expect(results).toEqual([{ outcome: "ok" }]);
  });

  it("queues connections up to the backlog while stopped, drops the rest, and admits the queue on resume", () => {
    const { clock, queue, network, results, send, abort } = setUp(3);
    network.stop();
    const handles = [send(), send(), send(), send(), send()];
    expect(network.queuedConnections).toBe(3);
    expect(network.droppedConnections).toBe(2);
    expect(queue.concurrency).toBe(0);
    abort(handles[0]); // this client gave up, but its connection stays queued
    let concurrencyBeforeAccepting = -1;
    network.resume(() => (concurrencyBeforeAccepting = queue.concurrency));
    expect(concurrencyBeforeAccepting).toBe(0);
    expect(queue.concurrency).toBe(3); // the stale request takes its slot too
    clock.runAll();
    expect(results).toEqual([{ outcome: "ok" }, { outcome: "ok" }]);
    expect(queue.snapshot()).toMatchObject({ served: 2, abandoned: 1 });
  });

  it("with cancel-on-disconnect, stale requests leave service as soon as they are accepted", () => {
    const { clock, queue, network, results, send, abort } = setUp(10, true);
    network.stop();
    const handle = send();
    send();
    abort(handle);
    network.resume();
    expect(queue.concurrency).toBe(1);
    clock.runAll();
    expect(results).toHaveLength(1);
    expect(queue.snapshot()).toMatchObject({ served: 1, cancelled: 1 });
  });

  it("abandons a request in service when its client gives up", () => {
    const { queue, send, abort } = setUp(10);
    const handle = send();
    abort(handle);
    expect(queue.concurrency).toBe(1); // the reference behaviour: the work goes on
  });

  it("answers a shed request 503 after a round trip, with the Retry-After the server sends", () => {
    const { clock, queue, results, send } = setUp(10, false, { maxConcurrency: 1 }, () => ({ retryAfterMs: 2_000 }));
    send();
    send();
    clock.advanceBy(IMMEDIATE_ANSWER_MS);
    expect(results).toEqual([{ outcome: "error", errorKind: "http-5xx", retryAfterMs: 2_000 }]);
    expect(queue.snapshot()).toMatchObject({ shed: 1, concurrency: 1 });
    const plain = setUp(10, false, { maxConcurrency: 1 });
    plain.send();
    plain.send();
    plain.clock.advanceBy(IMMEDIATE_ANSWER_MS);
    expect(plain.results).toEqual([{ outcome: "error", errorKind: "http-5xx" }]);
  });

  it("answers an injected error as a 5xx after the modelled delay", () => {
    const { clock, queue, results, send } = setUp(10, false, { errorInjection: { rate: 1, random: seededRandom(3) } });
    send();
    clock.advanceBy(99);
    expect(results).toEqual([]);
    clock.advanceBy(1);
    expect(results).toEqual([{ outcome: "error", errorKind: "http-5xx" }]);
    expect(queue.snapshot()).toMatchObject({ served: 1, errorsInjected: 1 });
  });

  it("with deadlines, expires requests at their client's timeout and refuses stale queued ones on resume", () => {
    const { clock, queue, network, results, send } = setUp(
      10,
      false,
      { delay: boundDelay(exponentialCurve, { baseDelayMs: 500, limit: 30, factor: 1.05, exponentDivisor: 15 }) },
      (clock) => ({
        deadline: { clock, timeoutMs: 300 },
      }),
    );
    send(); // deadline 300, would complete at 500
    clock.advanceBy(300);
    expect(queue.snapshot()).toMatchObject({ expired: 1, concurrency: 0 });
    network.stop();
    send(); // queued at 300: deadline 600
    clock.advanceBy(200);
    send(); // queued at 500: deadline 800
    clock.advanceBy(100); // 600: the first queued request's deadline has passed
    network.resume();
    expect(queue.snapshot()).toMatchObject({ expired: 2, admitted: 2, concurrency: 1 });
    clock.runAll();
    expect(queue.snapshot()).toMatchObject({ expired: 3, served: 0, concurrency: 0 });
    expect(results).toEqual([]); // expired requests get no answer: their clients time out at that instant
  });
  it("answers a shed request after a loopback round trip, not at the same instant", () => {
    const { clock, results, send, abort } = setUp(10, false, { maxConcurrency: 1 });
    send();
    send();
    expect(results).toEqual([]);
    clock.advanceBy(IMMEDIATE_ANSWER_MS);
    expect(results).toEqual([{ outcome: "error", errorKind: "http-5xx" }]);
    // A client that gives up first gets nothing.
    const handle = send();
    abort(handle);
    clock.advanceBy(10);
    expect(results).toHaveLength(1);
  });

  it("tells once when the server runs out of memory, also while accepting the queue on resume", () => {
    const { clock, queue, network, results, send } = setUp(10, false, { maxInService: 2 });
    let told = 0;
    network.onOutOfMemory = () => told++;
    network.stop();
    for (let index = 0; index < 4; index++) send();
    clock.advanceBy(5);
    network.resume();
    expect(told).toBe(1);
    expect(queue.outOfMemory).toEqual({ atMs: 5, inService: 2 });
    expect(queue.concurrency).toBe(2);
    send();
    expect(told).toBe(1);
    clock.runAll();
    expect(results).toEqual([]); // a server out of memory answers nothing more
  });
});

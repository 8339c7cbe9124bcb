import { describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import type { AttemptResult } from "../../../src/model/outcome.ts";
import { ServiceQueue } from "../../../src/model/service-queue.ts";
import { SimulatedNetwork } from "../../../src/sim/network.ts";

function setUp(backlog: number, cancelOnDisconnect = false) {
  const clock = new ManualClock();
  const queue = new ServiceQueue(clock, {
    latency: { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 },
    cancelOnDisconnect,
    maxConcurrency: Infinity,
  });
  const network = new SimulatedNetwork(queue, backlog);
  const results: AttemptResult[] = [];
  const send = () => network.transport.send({ done: (result) => results.push(result) });
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
});

import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../../src/backoff/random.ts";
import { ManualClock } from "../../../../src/clock/manual-clock.ts";
import { NORMAL_CONDITIONS } from "../../../../src/model/faults/conditions.ts";
import type { SharedDelay } from "../../../../src/model/servers/kind.ts";
import { exponentialCurve } from "../../../../src/model/servers/kinds/exponential.ts";
import { linearCurve } from "../../../../src/model/servers/kinds/linear.ts";
import { boundDelay } from "../../../../src/model/servers/delay-models.ts";
import type { ServerModel } from "../../../../src/model/servers/server-model.ts";
import { type Completion, ServiceQueue } from "../../../../src/model/service-queue.ts";
import { testThreadPool } from "../../../helpers/thread-pool.ts";

function record(clock: ManualClock, model: ServerModel) {
  const completions: string[] = [];
  const arrive = (name: string) =>
    model.admit(
      (context: string, completion: Completion) =>
        completions.push(`${context}${completion === "served" ? "" : `:${completion}`}@${clock.now()}`),
      name,
    );
  return { completions, arrive };
}

function sharedDelay(delay: SharedDelay) {
  const clock = new ManualClock();
  const queue = new ServiceQueue(clock, {
    delay,
    cancelOnDisconnect: false,
    maxConcurrency: Infinity,
    errorInjection: { rate: 0, random: seededRandom(1) },
  });
  return { clock, queue, ...record(clock, queue) };
}

describe("the models under fault conditions", () => {
  it("slow: the shared delay of the requests in service follows the fault at once, both ways", () => {
    const { clock, queue, completions, arrive } = sharedDelay(boundDelay(linearCurve, { kind: "linear", baseDelayMs: 1000, slopeMs: 10 }));
    arrive("a"); // 1010 ms
    clock.advanceBy(500);
    queue.setFaultConditions({ ...NORMAL_CONDITIONS, slowFactor: 2 }); // 2020 ms from its arrival
    clock.advanceBy(1000);
    expect(completions).toEqual([]);
    queue.setFaultConditions(NORMAL_CONDITIONS); // at 1500 it is past its 1010 ms: it completes now
    expect(completions).toEqual(["a@1500"]);
  });

  it("capacity: the exponential model's limit × factor, and the requests it lets complete complete now", () => {
    const { clock, queue, completions, arrive } = sharedDelay(
      boundDelay(exponentialCurve, { baseDelayMs: 100, limit: 2, factor: 2, exponentDivisor: 1 }),
    );
    arrive("a");
    arrive("b");
    queue.setFaultConditions({ ...NORMAL_CONDITIONS, capacityFactor: 0.5 }); // limit 1: 200 ms for two
    clock.advanceBy(150);
    expect(completions).toEqual([]);
    expect(queue.lastDelayMs).toBe(200);
    queue.setFaultConditions(NORMAL_CONDITIONS);
    expect(completions).toEqual(["a@150", "b@150"]);
  });

  it("errors: the share of the fault replaces the server's own rate while it lasts", () => {
    const { clock, queue, completions, arrive } = sharedDelay(
      boundDelay(exponentialCurve, { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 }),
    );
    queue.setFaultConditions({ ...NORMAL_CONDITIONS, errorRate: 1 });
    arrive("a");
    clock.advanceBy(100);
    queue.setFaultConditions(NORMAL_CONDITIONS);
    arrive("b");
    clock.advanceBy(100);
    expect(completions).toEqual(["a:injected-error@100", "b@200"]);
  });

  it("crash: the shared-delay server loses what is in it, hands back the clients still waiting, and starts empty", () => {
    const { clock, queue, completions, arrive } = sharedDelay(
      boundDelay(exponentialCurve, { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 }),
    );
    arrive("a");
    const b = arrive("b")!;
    queue.abandon(b);
    clock.advanceBy(50);
    expect(queue.crash()).toEqual(["a"]);
    expect(queue.concurrency).toBe(0);
    clock.advanceBy(100);
    expect(completions).toEqual([]);
    arrive("c");
    clock.advanceBy(100);
    expect(completions).toEqual(["c@250"]);
    expect(queue.snapshot()).toMatchObject({ concurrency: 0, abandonedInService: 0, served: 1, admitted: 3 });
  });

  it("crash: the thread pool loses its threads' and its queue's requests, and serves again from empty", () => {
    const clock = new ManualClock();
    const pool = testThreadPool(clock);
    const { completions, arrive } = record(clock, pool);
    arrive("a");
    arrive("b");
    const c = arrive("c")!;
    pool.abandon(c);
    expect(pool.crash()).toEqual(["a", "b"]);
    expect(pool.snapshot()).toMatchObject({ concurrency: 0, queueLength: 0, threadsBusy: 0, abandonedInService: 0 });
    clock.advanceBy(500);
    expect(completions).toEqual([]);
    arrive("d");
    clock.advanceBy(100);
    expect(completions).toEqual(["d@600"]);
  });
});

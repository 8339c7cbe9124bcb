import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { type RunningServer, startHttpServer } from "../../../src/server/http-server.ts";
import { parseServerArgs, resolveServerOptions } from "../../../src/options/server.ts";
import { eventually } from "../../helpers/eventually.ts";
import { rawGet } from "../../helpers/raw-http.ts";

/*
 * The real HTTP server with the queue model on a virtual clock: real sockets, and the test
 * decides when time passes, so it can say which round each answer comes in.
 */

const started: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

/** The server as its flags set it, on port 0 with a virtual clock. */
async function start(flags: readonly string[]) {
  const parsed = parseServerArgs(["-model", "queue", "-listen", "127.0.0.1:0", "-seed", "1", ...flags]);
  if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
  const clock = new ManualClock();
  const server = await startHttpServer(resolveServerOptions(parsed.values), clock);
  started.push(server);
  return { server, clock, port: server.address.port };
}

describe("HTTP server with the queue model", () => {
  it("answers 12 concurrent requests in three rounds of 4, as gunicorn's 4 sync workers × 50 ms do", async () => {
    const { server, clock, port } = await start(["-threads", "4", "-service-time", "50ms"]);
    const requests = Array.from({ length: 12 }, () => rawGet(port));
    await eventually(() => server.queue.concurrency === 12, "12 requests in the server");
    expect(server.queue.snapshot()).toMatchObject({ threadsBusy: 4, queueLength: 8, threads: 4 });
    const servedAt = async (ms: number) => {
      clock.advanceBy(ms);
      await eventually(
        () => requests.filter((request) => request.received().includes("\r\n\r\nOK")).length >= server.queue.snapshot().served,
        "every answer served has reached its client",
      );
      return server.queue.snapshot().served;
    };
    expect(await servedAt(49)).toBe(0);
    expect(await servedAt(1)).toBe(4);
    expect(await servedAt(50)).toBe(8);
    expect(await servedAt(50)).toBe(12);
    for (const text of await Promise.all(requests.map((request) => request.response))) expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it("answers 503 at once beyond -queue-limit", async () => {
    const { server, port } = await start(["-threads", "1", "-queue-limit", "1"]);
    rawGet(port);
    await eventually(() => server.queue.concurrency === 1, "one in the thread");
    rawGet(port);
    await eventually(() => server.queue.concurrency === 2, "one waiting");
    expect(await rawGet(port).response).toMatch(/^HTTP\/1\.1 503 /);
    expect(server.queue.snapshot()).toMatchObject({ shed: 1, queueLength: 1 });
  });

  it("with -shed-with drop, never answers a request beyond -queue-limit, as a full accept queue drops its SYN", async () => {
    const { server, port } = await start(["-threads", "1", "-queue-limit", "1", "-shed-with", "drop"]);
    rawGet(port);
    await eventually(() => server.queue.concurrency === 1, "one in the thread");
    rawGet(port);
    await eventually(() => server.queue.concurrency === 2, "one waiting");
    const dropped = rawGet(port);
    await eventually(() => server.queue.snapshot().shed === 1, "the third shed");
    // An answer on another connection after it: a 503 written when it was shed would have come by now.
    expect(await rawGet(port, "/stats").response).toMatch(/^HTTP\/1\.1 200 /);
    expect(dropped.received()).toBe("");
    expect(server.queue.snapshot()).toMatchObject({ shed: 1, queueLength: 1 });
  });
});

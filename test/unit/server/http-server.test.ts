import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerOptions } from "../../../src/options/server.ts";
import { type RunningServer, startHttpServer } from "../../../src/server/http-server.ts";
import { ManualClock } from "../../../src/clock/manual-clock.ts";
import { eventually } from "../../helpers/eventually.ts";
import { rawGet } from "../../helpers/raw-http.ts";
import { seededRandom } from "../../../src/backoff/random.ts";
import { TEST_SERVER_OPTIONS } from "../../helpers/server-fixtures.ts";

/*
 * The real HTTP server on a loopback port, with its service model on a virtual clock: real
 * sockets carry the requests, and the test decides when time passes, so it can say exactly
 * when each answer is sent, whatever the machine's speed.
 */

const started: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

const BASE = { baseDelayMs: 50, limit: 30, factor: 1.05, exponentDivisor: 15 };

async function start(overrides: Partial<ServerOptions> = {}) {
  const clock = new ManualClock();
  const server = await startHttpServer(
    {
      ...TEST_SERVER_OPTIONS,
      latency: BASE,
      ...overrides,
    },
    clock,
  );
  started.push(server);
  const inService = (count: number) => eventually(() => server.queue.concurrency === count, `${count} requests in service`);
  return { server, clock, inService, port: server.address.port, base: `http://127.0.0.1:${server.address.port}` };
}

describe("HTTP server", () => {
  it("answers GET /api with 200 OK exactly baseDelay after it arrived, oldest first", async () => {
    const { server, clock, inService, port } = await start();
    const first = rawGet(port);
    await inService(1);
    clock.advanceBy(30);
    const second = rawGet(port);
    await inService(2);
    clock.advanceBy(19); // t = 49: the first is one millisecond short of its delay
    expect(server.queue.snapshot().served).toBe(0);
    clock.advanceBy(1); // t = 50
    expect(server.queue.snapshot()).toMatchObject({ served: 1, concurrency: 1 });
    expect(await first.response).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nOK$/);
    expect(second.received()).toBe("");
    clock.advanceBy(29); // t = 79
    expect(server.queue.snapshot().served).toBe(1);
    clock.advanceBy(1); // t = 80: 50 ms after the second arrived
    expect(server.queue.snapshot()).toMatchObject({ served: 2, concurrency: 0 });
    expect(await second.response).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nOK$/);
  });

  it("raises the delay for everyone once concurrency passes the limit", async () => {
    // limit 2, factor 2, K 1: four in service means delay(4) = 50 * 2^2 = 200 ms.
    const { server, clock, inService, port } = await start({ latency: { baseDelayMs: 50, limit: 2, factor: 2, exponentDivisor: 1 } });
    const requests = [rawGet(port)];
    await inService(1);
    clock.advanceBy(10);
    requests.push(rawGet(port), rawGet(port), rawGet(port));
    await inService(4);
    expect(server.queue.lastDelayMs).toBe(200);
    clock.advanceBy(189); // t = 199: even the oldest, alone due at 50, waits for delay(4)
    expect(server.queue.snapshot().served).toBe(0);
    clock.advanceBy(1); // t = 200: the oldest leaves, delay(3) = 100 ms, and the rest (190 ms old) follow at once
    expect(server.queue.snapshot()).toMatchObject({ served: 4, peakConcurrency: 4, concurrency: 0 });
    const responses = await Promise.all(requests.map((request) => request.response));
    for (const text of responses) expect(text).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nOK$/);
  });

  it("keeps an abandoned request in service by default", async () => {
    const { server, clock, inService, port } = await start();
    const leaving = rawGet(port);
    const staying = rawGet(port);
    await inService(2);
    leaving.socket.destroy();
    await eventually(() => server.openConnections() === 1, "the server saw the client leave");
    expect(server.queue.concurrency).toBe(2);
    clock.advanceBy(50);
    expect(await staying.response).toContain("200 OK");
    expect(server.queue.snapshot()).toMatchObject({ served: 1, abandoned: 1, cancelled: 0, concurrency: 0 });
  });

  it("frees the slot of an abandoned request with cancel-on-disconnect", async () => {
    const { server, clock, inService, port } = await start({ cancelOnDisconnect: true });
    const leaving = rawGet(port);
    const staying = rawGet(port);
    await inService(2);
    leaving.socket.destroy();
    await inService(1);
    expect(server.queue.snapshot().cancelled).toBe(1);
    clock.advanceBy(50);
    expect(await staying.response).toContain("200 OK");
    expect(server.queue.snapshot()).toMatchObject({ served: 1, abandoned: 0, cancelled: 1 });
  });

  it("sheds requests above max concurrency with a 503 that does not wait for the model's clock", async () => {
    const { server, clock, inService, port, base } = await start({ maxConcurrency: 2 });
    const held = [rawGet(port), rawGet(port)];
    await inService(2);
    // No virtual time passes: the answer cannot have waited for any service delay.
    const shed = await fetch(`${base}/api`);
    expect(shed.status).toBe(503);
    expect(shed.headers.get("retry-after")).toBe("1");
    expect(clock.now()).toBe(0);
    expect(server.queue.snapshot()).toMatchObject({ shed: 1, served: 0, concurrency: 2 });
    clock.advanceBy(50);
    await Promise.all(held.map((request) => request.response));
    expect(server.queue.snapshot()).toMatchObject({ shed: 1, served: 2 });
  });

  it("sends the Retry-After it is given on a shed request, in whole seconds rounded up, and none for 0", async () => {
    const shedOnce = async (retryAfterMs: number) => {
      const { clock, inService, port, base } = await start({ maxConcurrency: 1, retryAfterMs });
      const held = rawGet(port);
      await inService(1);
      const shed = await fetch(`${base}/api`);
      clock.advanceBy(50);
      await held.response;
      return { status: shed.status, retryAfter: shed.headers.get("retry-after") };
    };
    expect(await shedOnce(1_500)).toEqual({ status: 503, retryAfter: "2" });
    expect(await shedOnce(0)).toEqual({ status: 503, retryAfter: null });
  });

  it("with deadline awareness, answers 504 at the deadline a request carries and counts it expired", async () => {
    const { server, clock, inService, port } = await start({
      latency: { baseDelayMs: 3_600_000, limit: 30, factor: 1.05, exponentDivisor: 15 },
      deadlineAware: true,
    });
    // Deadlines are epoch ms on the client's clock; the server moves them onto its own clock
    // (here the virtual one, at 0) through the difference of the two. 200 s ahead: the wall
    // clock cannot get there during the test, so only the virtual clock decides.
    const sentAt = Date.now();
    const expiring = rawGet(port, "/api", `x-request-deadline-ms: ${sentAt + 200_000}\r\n`);
    const late = rawGet(port, "/api", `x-request-deadline-ms: ${sentAt - 1}\r\n`);
    const malformed = rawGet(port, "/api", "x-request-deadline-ms: soon\r\n");
    expect(await late.response).toMatch(/^HTTP\/1\.1 504 Gateway Timeout/);
    await inService(2);
    expect(server.queue.snapshot()).toMatchObject({ expired: 1, admitted: 2 });
    clock.advanceBy(190_000); // before the deadline (less the few ms the request took to arrive)
    expect(server.queue.snapshot()).toMatchObject({ expired: 1, concurrency: 2 });
    clock.advanceBy(10_000);
    expect(await expiring.response).toMatch(/^HTTP\/1\.1 504 Gateway Timeout[\s\S]*deadline exceeded/);
    // A value that is no deadline is ignored: that request stays in service.
    expect(server.queue.snapshot()).toMatchObject({ expired: 2, admitted: 2, concurrency: 1 });
    malformed.socket.destroy();
  });

  it("ignores deadlines unless deadline-aware", async () => {
    const { server, clock, inService, port } = await start();
    const request = rawGet(port, "/api", `x-request-deadline-ms: ${Date.now() - 1_000}\r\n`);
    await inService(1);
    clock.advanceBy(50);
    expect(await request.response).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(server.queue.snapshot()).toMatchObject({ expired: 0, served: 1 });
  });

  it("answers the seeded fraction of requests 500 after the modelled delay, exactly as the seed draws", async () => {
    const { server, clock, inService, base } = await start({ errorRate: 0.25, seed: 77 });
    const statuses: number[] = [];
    for (let index = 0; index < 200; index++) {
      const pending = fetch(`${base}/api`);
      await inService(1);
      clock.advanceBy(50);
      const response = await pending;
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    // One request at a time: the n-th answer takes the n-th draw.
    const replay = seededRandom(77);
    expect(statuses).toEqual(statuses.map(() => (replay.uniform() < 0.25 ? 500 : 200)));
    const errors = statuses.filter((status) => status === 500).length;
    expect(server.queue.snapshot()).toMatchObject({ served: 200, errorsInjected: errors });
  });

  it("answers other paths 404, other methods 405, and /stats with a JSON snapshot", async () => {
    const { clock, inService, port, base } = await start();
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/api`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    const withQuery = rawGet(port, "/api?x=1");
    await inService(1);
    clock.advanceBy(50);
    expect(await withQuery.response).toContain("200 OK");
    const stats = (await (await fetch(`${base}/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ concurrency: 0, lastDelayMs: 50, lastDelay: "50ms", served: 1, admitted: 1 });
  });

  it("answers malformed HTTP with 400, closes that connection, and goes on serving", async () => {
    const { port, base } = await start();
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.write("THIS IS NOT HTTP\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect((await fetch(`${base}/stats`)).status).toBe(200);
  });
});

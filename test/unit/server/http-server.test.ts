import { afterEach, describe, expect, it } from "vitest";
import type { ServerOptions } from "../../../src/server/options.ts";
import { type RunningServer, startHttpServer } from "../../../src/server/http-server.ts";
import { realClock } from "../../../src/clock/real-clock.ts";
import { rawGet } from "../../helpers/raw-http.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

const started: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

async function start(overrides: Partial<ServerOptions> = {}) {
  const server = await startHttpServer(
    {
      latency: { baseDelayMs: 50, limit: 30, factor: 1.05, exponentDivisor: 15 },
      listen: { host: "127.0.0.1", port: 0 },
      backlog: 511,
      cancelOnDisconnect: false,
      maxConcurrency: Infinity,
      retryAfterMs: 1000,
      deadlineAware: false,
      errorRate: 0,
      seed: undefined,
      reportIntervalMs: 1000,
      json: false,
      metrics: false,
      ...overrides,
    },
    realClock,
  );
  started.push(server);
  return { server, port: server.address.port, base: `http://127.0.0.1:${server.address.port}` };
}

const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe("HTTP server", () => {
  it("answers GET /api with 200 OK after baseDelay, never earlier", async () => {
    const { base } = await start();
    for (let index = 0; index < 5; index++) {
      const started = performance.now();
      const response = await fetch(`${base}/api`);
      const elapsed = performance.now() - started;
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("OK");
      expect(elapsed).toBeGreaterThanOrEqual(50);
      expect(elapsed).toBeLessThan(50 + 250); // generous: a loaded 2-core machine
    }
  });

  it("raises the delay for everyone once concurrency passes the limit", async () => {
    // limit 2, factor 2, K 1: four in service means delay(4) = 50 * 2^2 = 200 ms.
    const { server, port } = await start({ latency: { baseDelayMs: 50, limit: 2, factor: 2, exponentDivisor: 1 } });
    const started = performance.now();
    const requests = [0, 1, 2, 3].map(() => rawGet(port));
    await until(() => server.queue.concurrency === 4);
    expect(server.queue.lastDelayMs).toBe(200);
    const responses = await Promise.all(requests.map((request) => request.response));
    const elapsed = performance.now() - started;
    for (const text of responses) expect(text).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nOK$/);
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(server.queue.snapshot()).toMatchObject({ served: 4, peakConcurrency: 4, concurrency: 0 });
  });

  it("keeps an abandoned request in service by default", async () => {
    const { server, port } = await start({ latency: { baseDelayMs: 300, limit: 30, factor: 1.05, exponentDivisor: 15 } });
    const leaving = rawGet(port);
    const staying = rawGet(port);
    await until(() => server.queue.concurrency === 2);
    leaving.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.queue.concurrency).toBe(2);
    expect(await staying.response).toContain("200 OK");
    await until(() => server.queue.concurrency === 0);
    expect(server.queue.snapshot()).toMatchObject({ served: 1, abandoned: 1, cancelled: 0 });
  });

  it("frees the slot of an abandoned request with cancel-on-disconnect", async () => {
    const { server, port } = await start({
      latency: { baseDelayMs: 300, limit: 30, factor: 1.05, exponentDivisor: 15 },
      cancelOnDisconnect: true,
    });
    const leaving = rawGet(port);
    const staying = rawGet(port);
    await until(() => server.queue.concurrency === 2);
    leaving.socket.destroy();
    await until(() => server.queue.concurrency === 1);
    expect(await staying.response).toContain("200 OK");
    expect(server.queue.snapshot()).toMatchObject({ served: 1, abandoned: 0, cancelled: 1 });
  });

  it("sheds requests above max concurrency with an immediate 503", async () => {
    const { server, port, base } = await start({
      latency: { baseDelayMs: 500, limit: 30, factor: 1.05, exponentDivisor: 15 },
      maxConcurrency: 2,
    });
    const held = [rawGet(port), rawGet(port)];
    await until(() => server.queue.concurrency === 2);
    const started = performance.now();
    const shed = await fetch(`${base}/api`);
    expect(shed.status).toBe(503);
    expect(shed.headers.get("retry-after")).toBe("1");
    expect(performance.now() - started).toBeLessThan(400);
    await Promise.all(held.map((request) => request.response));
    expect(server.queue.snapshot()).toMatchObject({ shed: 1, served: 2 });
  });

  it("sends the Retry-After it is given on a shed request, in whole seconds rounded up, and none for 0", async () => {
    const shedOnce = async (retryAfterMs: number) => {
      const { server, port, base } = await start({
        latency: { baseDelayMs: 500, limit: 30, factor: 1.05, exponentDivisor: 15 },
        maxConcurrency: 1,
        retryAfterMs,
      });
      const held = rawGet(port);
      await until(() => server.queue.concurrency === 1);
      const shed = await fetch(`${base}/api`);
      await held.response;
      return { status: shed.status, retryAfter: shed.headers.get("retry-after") };
    };
    expect(await shedOnce(1_500)).toEqual({ status: 503, retryAfter: "2" });
    expect(await shedOnce(0)).toEqual({ status: 503, retryAfter: null });
  });

  it("with deadline awareness, answers 504 at the deadline a request carries and counts it expired", async () => {
    const { server, port } = await start({
      latency: { baseDelayMs: 60_000, limit: 30, factor: 1.05, exponentDivisor: 15 },
      deadlineAware: true,
    });
    const deadline = Date.now() + 200;
    const expiring = rawGet(port, "/api", `x-request-deadline-ms: ${deadline}\r\n`);
    const late = rawGet(port, "/api", `x-request-deadline-ms: ${Date.now() - 1}\r\n`);
    const malformed = rawGet(port, "/api", "x-request-deadline-ms: soon\r\n");
    expect(await late.response).toMatch(/^HTTP\/1\.1 504 Gateway Timeout/);
    await until(() => server.queue.concurrency === 2);
    expect(server.queue.snapshot()).toMatchObject({ expired: 1, admitted: 2 });
    expect(await expiring.response).toMatch(/^HTTP\/1\.1 504 Gateway Timeout[\s\S]*deadline exceeded/);
    // Never before the deadline (the same clock on both sides).
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    // A value that is no deadline is ignored: that request stays in service.
    expect(server.queue.snapshot()).toMatchObject({ expired: 2, admitted: 2, concurrency: 1 });
    malformed.socket.destroy();
  });

  it("ignores deadlines unless deadline-aware", async () => {
    const { server, port } = await start({ latency: { baseDelayMs: 100, limit: 30, factor: 1.05, exponentDivisor: 15 } });
    const request = rawGet(port, "/api", `x-request-deadline-ms: ${Date.now() - 1_000}\r\n`);
    expect(await request.response).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(server.queue.snapshot()).toMatchObject({ expired: 0, served: 1 });
  });

  it("answers the seeded fraction of requests 500 after the modelled delay, exactly as the seed draws", async () => {
    const { server, base } = await start({
      latency: { baseDelayMs: 1, limit: 30, factor: 1.05, exponentDivisor: 15 },
      errorRate: 0.25,
      seed: 77,
    });
    const statuses: number[] = [];
    for (let index = 0; index < 200; index++) {
      const response = await fetch(`${base}/api`);
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
    const { base } = await start();
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/api`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    await fetch(`${base}/api?x=1`);
    const stats = (await (await fetch(`${base}/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ concurrency: 0, lastDelayMs: 50, lastDelay: "50ms", served: 1, admitted: 1 });
  });

  it("answers malformed HTTP with 400, closes that connection, and goes on serving", async () => {
    const { port, base } = await start();
    const { connect } = await import("node:net");
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.write("THIS IS NOT HTTP\r\n\r\n");
    await new Promise((resolve) => socket.on("close", resolve));
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect((await fetch(`${base}/api`)).status).toBe(200);
  });
});

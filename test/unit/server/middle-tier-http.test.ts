import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { realClock } from "../../../src/clock/real-clock.ts";
import { DEADLINE_HEADER } from "../../../src/model/protection-headers.ts";
import { startHttpServer } from "../../../src/server/http-server.ts";
import { parseServerArgs, resolveServerProgramOptions } from "../../../src/options/server.ts";
import { eventually } from "../../helpers/eventually.ts";
import { type HostileService, startHostileService } from "../../helpers/hostile-service.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";

/*
 * A real middle tier (./server -upstream) in-process, on real sockets, in front of a scripted
 * upstream that records what each call brings: the 502 of a call that failed for good, the
 * deadline carried down, and a deadline-aware tier that calls nobody for a request already late.
 */

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
});

async function middleTier(upstreamUrl: string, flags: readonly string[]) {
  const parsed = parseServerArgs(["-model", "queue", "-listen", "127.0.0.1:0", "-seed", "1", "-upstream", upstreamUrl, ...flags]);
  if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
  const server = await startHttpServer(resolveServerProgramOptions(parsed.values), realClock);
  started.push(server);
  return { server, url: `http://127.0.0.1:${server.address.port}/api` };
}

async function get(url: string, deadlineEpochMs?: number): Promise<number> {
  const headers: Record<string, string> = deadlineEpochMs === undefined ? {} : { [DEADLINE_HEADER]: String(deadlineEpochMs) };
  const response = await fetch(url, { headers });
  await response.text();
  return response.status;
}

describe("a real middle tier", () => {
  it("answers 502 once its calls have failed for good, after the attempts its policy allows", async () => {
    const upstream = await startScriptedServer((_request, response) => response.writeHead(500).end());
    const { server, url } = await middleTier(upstream.url, ["-upstream-max-attempts", "2", "-upstream-simple-backoff-delay", "1ms"]);
    expect(await get(url)).toBe(502);
    expect(upstream.arrivals).toHaveLength(2);
    expect(server.queue.snapshot()).toMatchObject({ admitted: 1, upstream: { requests: 1, attempts: 2, attemptsError: 2, failures: 1 } });
  });

  it("fails a call whose answer's body is over 1 MiB, unless -upstream-max-body raises the cap", async () => {
    // 1.5 MiB: over the default cap, under the 2 MiB the flag raises it to.
    const upstream = await startScriptedServer((_request, response) => response.end("x".repeat(1.5 * 1024 * 1024)));
    const byDefault = await middleTier(upstream.url, ["-upstream-max-attempts", "1"]);
    const raised = await middleTier(upstream.url, ["-upstream-max-attempts", "1", "-upstream-max-body", String(2 * 1024 * 1024)]);
    expect(await get(byDefault.url)).toBe(502);
    expect(await get(raised.url)).toBe(200);
  });

  it("carries the deadline its request brought down, or its own attempt's when that comes first", async () => {
    const seen: (string | undefined)[] = [];
    const upstream = await startScriptedServer((request, response) => {
      seen.push(request.headers[DEADLINE_HEADER] as string | undefined);
      response.writeHead(200).end("OK");
    });
    const plain = await middleTier(upstream.url, ["-upstream-timeout", "10s"]);
    const brought = Date.now() + 60_000;
    expect(await get(plain.url, brought)).toBe(200);
    expect(await get(plain.url)).toBe(200);
    expect(seen).toEqual([String(brought), undefined]);

    const propagating = await middleTier(upstream.url, ["-upstream-timeout", "1s", "-upstream-propagate-deadline"]);
    const before = Date.now();
    expect(await get(propagating.url, brought)).toBe(200); // its own deadline, about a second away, comes first
    const own = Number(seen[2]);
    expect(own).toBeGreaterThanOrEqual(before + 1000);
    expect(own).toBeLessThan(brought);
    const soon = Date.now() + 500;
    expect(await get(propagating.url, soon)).toBe(200); // the request's own, half a second away, comes first
    expect(seen[3]).toBe(String(soon));
  });

  it("with -deadline-aware, calls nobody for a request whose deadline passed, on arrival or while it waited for a thread", async () => {
    const held: ServerResponse[] = [];
    const upstream = await startScriptedServer((_request, response) => held.push(response));
    const { server, url } = await middleTier(upstream.url, ["-threads", "1", "-deadline-aware"]);
    expect(await get(url, Date.now() - 1)).toBe(504);
    const first = get(url);
    await eventually(() => held.length === 1, "the first request calling upstream");
    const deadline = Date.now() + 100;
    const second = get(url, deadline); // waits for the one thread, held by the first's call
    await eventually(() => server.queue.snapshot().queueLength === 1, "the second request waiting");
    await eventually(() => Date.now() > deadline, "the second request's deadline passed");
    held[0]!.writeHead(200).end("OK");
    expect(await first).toBe(200);
    expect(await second).toBe(504);
    expect(upstream.arrivals).toHaveLength(1);
    expect(server.queue.snapshot()).toMatchObject({ served: 1, expired: 2, upstream: { requests: 1 } });
  });

  it.each(["broken-chunks", "huge-content-length", "endless-body"] as const)(
    "answers 502, not 200, when its upstream's 200 comes with a broken body (%s)",
    async (kind) => {
      const upstream: HostileService = await startHostileService(kind);
      started.push(upstream);
      const { server, url } = await middleTier(upstream.url, ["-upstream-max-attempts", "2", "-upstream-simple-backoff-delay", "1ms"]);
      expect(await get(url)).toBe(502);
      expect(upstream.requests()).toBe(2);
      expect(server.queue.snapshot()).toMatchObject({ upstream: { attempts: 2, attemptsError: 2, failures: 1 } });
    },
  );
});

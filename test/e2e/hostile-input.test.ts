import { describe, expect, it } from "vitest";
import { HOSTILE_CASES, openStalledConnections, sendHostileRequests } from "../../harness/hostile-http.ts";
import { getJson } from "../helpers/raw-http.ts";
import { spawnServer } from "../helpers/spawn-cli.ts";

/*
 * A small version of `npm run soak`'s hostile-input phase against the real server: a few
 * hundred random and malformed requests (every kind at least once), each answered as a
 * correct server does, and connections that never finish their request head, closed by the
 * headers timeout with 408 while /stats keeps answering.
 */
describe("./server under hostile input", () => {
  it("answers every malformed request correctly and keeps serving", async () => {
    const { server, port, url } = await spawnServer();
    const report = await sendHostileRequests(port, { count: 300, concurrency: 20, seed: 7 });
    const wrong = [...report.byCase.entries()]
      .filter(([, outcome]) => outcome.wrong > 0)
      .map(([name, outcome]) => `${name}: ${outcome.examples.join("; ")}`);
    expect(report.sent).toBe(300);
    expect(report.byCase.size).toBe(HOSTILE_CASES.length);
    expect(wrong).toEqual([]);
    expect(server.exitCode).toBeNull();
    expect(await getJson<{ concurrency: number }>(url.replace("/api", "/stats"))).toHaveProperty("concurrency");
    expect(server.stderrLines.filter((line) => /unexpected|uncaught|unhandled|^\s+at /.test(line))).toEqual([]);
  });

  it("closes connections that never finish their head with 408 after the headers timeout, answering /stats meanwhile", async () => {
    const { server, port, url } = await spawnServer(["-headers-timeout", "1s"]);
    const stalled = await openStalledConnections(port, 200, 50);
    const stats = await getJson<{ concurrency: number }>(url.replace("/api", "/stats"));
    expect(stats.concurrency).toBe(0); // none of them reached service
    const closes = await Promise.all(stalled.map((connection) => connection.closed));
    expect(closes.map((closed) => closed.statuses)).toEqual(closes.map(() => [408]));
    // Closed by the timeout, so never before it (measured from before each connect).
    const earliest = Math.min(...closes.map((closed, index) => closed.atMs - stalled[index]!.openedAt));
    expect(earliest).toBeGreaterThanOrEqual(1_000);
    expect(server.exitCode).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { getJson, rawGet } from "../helpers/raw-http.ts";
import { spawnServer } from "../helpers/spawn-cli.ts";

describe("./server -max-in-service", () => {
  it("stops with one line and exit 1 when its modelled memory is full, as a Node server whose heap is full", async () => {
    const { server, port } = await spawnServer(["-max-in-service", "3", "-baseDelay", "1h"]);
    const held = [rawGet(port), rawGet(port), rawGet(port)];
    // Wait for the three to be in service (a request is only counted once the server read it).
    for (;;) {
      const stats = await getJson<{ concurrency: number }>(`http://127.0.0.1:${port}/stats`);
      if (stats.concurrency === 3) break;
      await server.waitForLine(/concurrency/, { stream: "stdout", fromIndex: server.stdoutLines.length });
    }
    const fourth = rawGet(port);
    expect(await server.exited).toBe(1);
    expect(server.stderrLines.filter((line) => line.startsWith("server: out of memory"))).toEqual([
      "server: out of memory: 3 requests in service, the -max-in-service limit; stopping, as a Node server whose heap is full does",
    ]);
    // The clients see their connections closed without an answer.
    expect(await fourth.response).toBe("");
    for (const request of held) expect(await request.response).toBe("");
  });
});

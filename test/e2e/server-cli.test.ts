import { describe, expect, it } from "vitest";
import { getJson, rawGet, type RawRequest } from "../helpers/raw-http.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

const REPORT_LINE = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d{3}: concurrency: {1,4}\d+, last delay: \S+$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stats {
  concurrency: number;
  peakConcurrency: number;
  served: number;
}

describe("./server", () => {
  it("prints -h with every flag and exits 0", async () => {
    const cli = spawnCli("server", ["-h"]);
    expect(await cli.exited).toBe(0);
    const help = cli.stdoutLines.join("\n");
    for (const flag of [
      "-limit n",
      "-factor f",
      "-baseDelay duration",
      "-k n",
      "-listen host:port",
      "-backlog n",
      "-cancel-on-disconnect",
      "-max-concurrency n",
      "-report-interval duration",
      "-json",
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toContain("(default: 4096)");
  });

  it("rejects a bad flag with one line, a hint and exit 2", async () => {
    const cli = spawnCli("server", ["-baseDelay", "soon"]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderrLines.filter((line) => line !== "")).toEqual([
      'server: invalid value "soon" for flag -baseDelay: must be a duration such as 300ms, 1.5s, 2m or 1h2m3s',
      "Run 'server -h' for usage.",
    ]);
  });

  it("reports a port in use in one line and exits 1", async () => {
    const { port } = await spawnServer();
    const second = spawnCli("server", ["-listen", `127.0.0.1:${port}`]);
    expect(await second.exited).toBe(1);
    expect(second.stderrLines.filter((line) => line !== "")).toEqual([`server: listen 127.0.0.1:${port}: address already in use`]);
  });

  it("prints the reference report line every interval, and JSON with -json", async () => {
    const { server } = await spawnServer(["-report-interval", "100ms"]);
    await server.waitForLine(/concurrency/, { stream: "stdout" });
    await server.waitForLine(/concurrency/, { stream: "stdout", fromIndex: 1 });
    expect(server.stdoutLines[0]).toMatch(REPORT_LINE);
    const json = await spawnServer(["-report-interval", "100ms", "-json"]);
    const line = await json.server.waitForLine(/^\{/, { stream: "stdout" });
    expect(JSON.parse(line)).toMatchObject({ concurrency: 0, lastDelay: "0s", served: 0 });
  });

  it("queues connections while SIGSTOPped and takes them all into service on SIGCONT, with one report per interval", async () => {
    const { server, port, url } = await spawnServer(["-report-interval", "200ms", "-baseDelay", "1s"]);
    await server.waitForLine(/concurrency/, { stream: "stdout" });
    server.signal("SIGSTOP");
    await sleep(100);
    const queued: RawRequest[] = [];
    for (let index = 0; index < 60; index++) queued.push(rawGet(port));
    await Promise.all(queued.map((request) => request.connected)); // the kernel's backlog accepts them
    await sleep(1_000);
    const linesBeforeResume = server.stdoutLines.length;
    const resumedAt = Date.now();
    server.signal("SIGCONT");
    const stats = await (async () => {
      for (;;) {
        const snapshot = await getJson<Stats>(url.replace("/api", "/stats"));
        if (snapshot.concurrency >= 60) return snapshot;
        await sleep(10);
      }
    })();
    expect(stats.concurrency).toBe(60);
    const spikeLine = await server.waitForLine(/concurrency: +60,/, { stream: "stdout", fromIndex: linesBeforeResume });
    expect(spikeLine).toMatch(REPORT_LINE);
    // No burst of stale lines for the second the server was stopped: at most one line at once.
    const sinceResume = server.stdoutLines.length - linesBeforeResume;
    expect(sinceResume).toBeLessThanOrEqual(Math.ceil((Date.now() - resumedAt) / 200) + 1);
    await sleep(450);
    expect(server.stdoutLines.length - linesBeforeResume).toBeLessThanOrEqual(Math.ceil((Date.now() - resumedAt) / 200) + 1);
    const answered = await Promise.all(queued.map((request) => request.response));
    expect(answered.filter((text) => text.startsWith("HTTP/1.1 200 OK"))).toHaveLength(60);
  });

  it("exits 0 within a second of SIGTERM with thousands of requests in service", async () => {
    const { server, port, url } = await spawnServer(["-baseDelay", "1h"]);
    const held: RawRequest[] = [];
    for (let index = 0; index < 2_000; index++) held.push(rawGet(port));
    for (;;) {
      if ((await getJson<Stats>(url.replace("/api", "/stats"))).concurrency === 2_000) break;
      await sleep(20);
    }
    const signalledAt = performance.now();
    server.signal("SIGTERM");
    expect(await server.exited).toBe(0);
    expect(performance.now() - signalledAt).toBeLessThan(1_000);
    expect(server.stdoutLines.at(-2) ?? server.stdoutLines.at(-1)).toMatch(/concurrency: 2000,/);
    expect(server.stderrLines.join("\n")).toMatch(/SIGTERM: stopped; .*still in service 2000/);
    await Promise.all(held.map((request) => request.response)); // every client connection was closed
  });

  it("survives running out of file descriptors, says so at most once a second, and recovers", async () => {
    // With 64 descriptors, a few dozen held connections exhaust the process.
    const { server, port, url } = await spawnServer(["-baseDelay", "30s"], { shell: "ulimit -n 64" });
    expect((await getJson<Stats>(url.replace("/api", "/stats"))).concurrency).toBe(0);
    const held: RawRequest[] = [];
    for (let index = 0; index < 120; index++) held.push(rawGet(port));
    await server.waitForLine(/server: out of file descriptors \(\d+ of 64 open\)/, { stream: "stderr", timeoutMs: 10_000 });
    await sleep(1_500);
    const problemLines = server.stderrLines.filter((line) => line.includes("out of file descriptors"));
    expect(problemLines).toHaveLength(1);
    for (const request of held) request.socket.destroy();
    await server.waitForLine(/server: file descriptors available again/, { stream: "stderr", timeoutMs: 10_000 });
    // Recovered: once descriptors are free again a request is served.
    const started = Date.now();
    let stats: Stats | undefined;
    while (Date.now() - started < 10_000) {
      try {
        stats = await getJson<Stats>(url.replace("/api", "/stats"));
        break;
      } catch {
        await sleep(100);
      }
    }
    expect(stats).toBeDefined();
    expect(server.exitCode).toBeNull();
  });
});

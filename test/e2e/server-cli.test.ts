import { describe, expect, it } from "vitest";
import { getJson, rawGet, type RawRequest } from "../helpers/raw-http.ts";
import { eventually } from "../helpers/eventually.ts";
import { processState } from "../helpers/process-state.ts";
import { isRunning } from "../helpers/processes.ts";
import { scrape } from "../helpers/prometheus.ts";
import { serverLines } from "../helpers/output-lines.ts";
import { runTogether } from "../helpers/run-together.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

const REPORT_LINE = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d{3}: concurrency: {1,4}\d+, last delay: \S+$/;

interface Stats {
  concurrency: number;
  peakConcurrency: number;
  served: number;
}

describe("./server", () => {
  // Each run is its own server waiting for its requests, reports or signals: all of them run side by side.
  const runs = runTogether({
    help: async () => {
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
        "-headers-timeout duration",
        "-json",
      ]) {
        expect(help).toContain(flag);
      }
      expect(help).toContain("(default: 4096)");
    },
    badFlag: async () => {
      const cli = spawnCli("server", ["-baseDelay", "soon"]);
      expect(await cli.exited).toBe(2);
      expect(cli.stderrLines.filter((line) => line !== "")).toEqual([
        'server: invalid value "soon" for flag -baseDelay: must be a duration such as 300ms, 1.5s, 2m or 1h2m3s',
        "Run 'server -h' for usage.",
      ]);
    },
    portInUse: async () => {
      const { port } = await spawnServer();
      const second = spawnCli("server", ["-listen", `127.0.0.1:${port}`]);
      expect(await second.exited).toBe(1);
      expect(second.stderrLines.filter((line) => line !== "")).toEqual([`server: listen 127.0.0.1:${port}: address already in use`]);
    },
    reportLines: async () => {
      const { server } = await spawnServer(["-report-interval", "100ms"]);
      await server.waitForLine(/concurrency/, { stream: "stdout" });
      await server.waitForLine(/concurrency/, { stream: "stdout", fromIndex: 1 });
      expect(server.stdoutLines[0]).toMatch(REPORT_LINE);
      const json = await spawnServer(["-report-interval", "100ms", "-json"]);
      const line = await json.server.waitForLine(/^\{/, { stream: "stdout" });
      expect(serverLines([line])[0]).toMatchObject({ concurrency: 0, lastDelay: "0s", served: 0 });
    },
    stopped: async () => {
      const flags = ["-report-interval", "200ms", "-baseDelay", "1s", "-json"];
      const { server, port, url } = await spawnServer(flags);
      // A twin that keeps running counts the report intervals the stopped one misses.
      const { server: twin } = await spawnServer(flags);
      await server.waitForLine(/^\{/, { stream: "stdout" });
      server.signal("SIGSTOP");
      await eventually(() => processState(server.pid) === "T", "the server is stopped");
      const stoppedAt = Date.now();
      const queued: RawRequest[] = [];
      for (let index = 0; index < 60; index++) queued.push(rawGet(port));
      await Promise.all(queued.map((request) => request.connected)); // the kernel's backlog accepts them
      // Held stopped across five report intervals, as the twin's reports show, so that missed reports could pile up.
      const twinReports = twin.stdoutLines.length;
      await twin.waitForLine(/^\{/, { stream: "stdout", fromIndex: twinReports + 4 });
      const resumedAt = Date.now();
      server.signal("SIGCONT");
      await eventually(
        async () => (await getJson<Stats>(url.replace("/api", "/stats"))).concurrency === 60,
        "all 60 queued requests in service",
      );
      const spike = await server.waitForLine(/"concurrency":60,/, { stream: "stdout" });
      const spikeIndex = server.stdoutLines.indexOf(spike);
      await server.waitForLine(/^\{/, { stream: "stdout", fromIndex: spikeIndex + 2 });
      const times = serverLines(server.stdoutLines).map((line) => line.epochMs);
      // Nothing is printed while stopped, ...
      expect(times.filter((time) => time > stoppedAt && time < resumedAt)).toEqual([]);
      // ... and on resume one line, then one per interval: never two lines closer than the interval
      // (a few ms allowed for Node's millisecond loop clock).
      const gaps = times.slice(1).map((time, index) => time - times[index]!);
      expect(Math.min(...gaps), `gaps ${gaps.join(", ")} ms`).toBeGreaterThanOrEqual(200 - 5);
      const answered = await Promise.all(queued.map((request) => request.response));
      expect(answered.filter((text) => text.startsWith("HTTP/1.1 200 OK"))).toHaveLength(60);
    },
    sigterm: async () => {
      // How fast it exits is a figure of `npm run bench -- server`, not a test.
      const { server, port, url } = await spawnServer(["-baseDelay", "1h"]);
      const held: RawRequest[] = [];
      for (let index = 0; index < 2_000; index++) held.push(rawGet(port));
      await eventually(
        async () => (await getJson<Stats>(url.replace("/api", "/stats"))).concurrency === 2_000,
        "2 000 requests in service",
        60_000,
      );
      server.signal("SIGTERM");
      expect(await server.exited).toBe(0);
      expect(server.stdoutLines.at(-1)).toMatch(/concurrency: 2000,/); // the final report, printed on SIGTERM
      expect(server.stderrLines.join("\n")).toMatch(/SIGTERM: stopped; .*still in service 2000/);
      await Promise.all(held.map((request) => request.response)); // every client connection was closed
    },
    workers: async () => {
      // Two processes, one model state: limit 5, factor 2, K 5, 500 ms base. 20 requests in the whole server give
      // 500 ms x 2^((20 - 5) / 5) = 4 s; either process alone, with its 10, would give 1 s.
      const flags = [
        "-workers",
        "2",
        "-limit",
        "5",
        "-factor",
        "2",
        "-k",
        "5",
        "-baseDelay",
        "500ms",
        "-report-interval",
        "100ms",
        "-json",
        "-metrics",
      ];
      const { server, port, url } = await spawnServer(flags);
      const announced = server.stderrLines.join("\n");
      const pids = /2 processes: (\d+), (\d+)\)/.exec(announced);
      expect(pids, announced).not.toBeNull();
      const started = performance.now();
      const held = Array.from({ length: 20 }, () => rawGet(port));
      const latencies = held.map((request) => request.response.then(() => performance.now() - started));
      const whole = await server.waitForLine(/"concurrency":20,/, { stream: "stdout" });
      expect(serverLines([whole])[0]).toMatchObject({ concurrency: 20, lastDelayMs: 4000 });
      // GET /stats answers for the whole server too, whichever process it reaches.
      for (let ask = 0; ask < 2; ask++) expect((await getJson<Stats>(url.replace("/api", "/stats"))).concurrency).toBe(20);
      // And so does GET /metrics, read by a Prometheus parser: counts added up, the limit and the delay not.
      for (let ask = 0; ask < 2; ask++) {
        const series = (await scrape(url.replace("/api", "/metrics"))).scrape;
        expect(series.value("thundering_herd_server_requests_in_service")).toBe(20);
        expect(series.value("thundering_herd_server_admitted_total")).toBe(20);
        expect(series.value("thundering_herd_server_concurrency_limit")).toBe(5);
        expect(series.value("thundering_herd_server_modelled_delay_seconds")).toBe(4);
      }
      // Each request waited the whole server's delay (a lower bound: a slow machine only adds).
      for (const latency of await Promise.all(latencies)) expect(latency).toBeGreaterThanOrEqual(2_000);
      for (const response of await Promise.all(held.map((request) => request.response))) expect(response).toMatch(/^HTTP\/1\.1 200 OK/);
      // To the whole group, as a terminal's Ctrl-C or the demo's stop reaches it: the first process answers for all.
      process.kill(-server.pid, "SIGTERM");
      expect(await server.exited).toBe(0);
      expect(server.stderrLines.join("\n")).toMatch(/SIGTERM: stopped; served 20 /);
      expect(server.stderrLines.join("\n")).not.toMatch(/ended/);
      for (const pid of pids!.slice(1).map(Number)) await eventually(() => !isRunning(pid), `server process ${pid} ended`);
    },
    noDescriptor: async () => {
      // With 64 descriptors, a few dozen held connections exhaust the process.
      const { server, port, url } = await spawnServer(["-baseDelay", "30s"], { shell: "ulimit -n 64" });
      expect((await getJson<Stats>(url.replace("/api", "/stats"))).concurrency).toBe(0);
      const held: RawRequest[] = [];
      for (let index = 0; index < 120; index++) held.push(rawGet(port));
      await server.waitForLine(/server: out of file descriptors \(\d+ of 64 open\)/, { stream: "stderr", timeoutMs: 10_000 });
      // Held exhausted until three more report lines: the report and the descriptor watcher tick on
      // the same 1 s period, so the watcher has looked again at least twice meanwhile.
      const reportsBefore = server.stdoutLines.length;
      await server.waitForLine(/concurrency/, { stream: "stdout", fromIndex: reportsBefore + 2 });
      for (const request of held) request.socket.destroy();
      await server.waitForLine(/server: file descriptors available again/, { stream: "stderr", timeoutMs: 10_000 });
      // One exhaustion, one line about it.
      expect(server.stderrLines.filter((line) => line.includes("out of file descriptors"))).toHaveLength(1);
      // Recovered: once descriptors are free again a request is served.
      let stats: Stats | undefined;
      await eventually(async () => {
        stats = await getJson<Stats>(url.replace("/api", "/stats")).catch(() => undefined);
        return stats !== undefined;
      }, "/stats answers again");
      expect(stats).toBeDefined();
      expect(server.exitCode).toBeNull();
    },
  });

  it("prints -h with every flag and exits 0", () => runs("help"));

  it("-workers 2: two processes share the port and one model state, and the lines report the whole server", () => runs("workers"));

  it("rejects a bad flag with one line, a hint and exit 2", () => runs("badFlag"));

  it("reports a port in use in one line and exits 1", () => runs("portInUse"));

  it("prints the reference report line every interval, and JSON with -json", () => runs("reportLines"));

  it("queues connections while SIGSTOPped and takes them all into service on SIGCONT, with no burst of stale reports", () =>
    runs("stopped"));

  it("exits 0 on SIGTERM with thousands of requests in service, closing every connection", () => runs("sigterm"));

  it("survives running out of file descriptors, says so once per exhaustion, and recovers", () => runs("noDescriptor"));
});

import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChildProgram } from "../../src/runtime/child-program.ts";
import { ServerProcess } from "../../src/runtime/server-process.ts";
import { demo, reportDir } from "../helpers/demo-experiment.ts";
import { eventually } from "../helpers/eventually.ts";
import { clientReportLines, serverLines } from "../helpers/output-lines.ts";
import { isRunning } from "../helpers/processes.ts";
import { getJson, rawGet } from "../helpers/raw-http.ts";
import { runTogether } from "../helpers/run-together.ts";
import { REPO_ROOT, spawnCli, spawnServer } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

/*
 * Fault schedules in the real programs: the server's fault control, a crash and its restart
 * as the demo's runner does them, and a spike's extra client. Scaled down: seconds each.
 */

interface Stats {
  served: number;
  errorsInjected: number;
  lastDelayMs: number;
  threads: number;
  faults?: { kind: string; factor: number }[];
}

const put = async (port: number, body: string) => {
  const response = await fetch(`http://127.0.0.1:${port}/faults`, { method: "PUT", body });
  return { status: response.status, text: await response.text() };
};

/** Answers of `count` GET /api, one after another, each as its status code. */
async function statuses(port: number, count: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < count; i++) codes.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(await rawGet(port).response)?.[1] ?? 0));
  return codes;
}

const ownPrograms: ServerProcess[] = [];
afterEach(async () => {
  for (const server of ownPrograms.splice(0)) {
    server.kill();
    await Promise.all(server.incarnations.map((program) => program.exited));
  }
});

describe("fault schedules in the real programs", () => {
  // Each run is seconds of waiting (for reports, a restart, a spike): the three run side by side.
  const runs = runTogether({
    faultControl: async () => {
      const { server, port } = await spawnServer([
        ...["-model", "queue", "-threads", "8", "-service-time", "20ms", "-json", "-report-interval", "100ms"],
        ...["-admin-listen", "127.0.0.1:0", "-seed", "1"],
      ]);
      const control = await server.waitForLine(/^server: fault control on http:\/\/127\.0\.0\.1:\d+\/faults/, { stream: "stderr" });
      const adminPort = Number(/:(\d+)\/faults/.exec(control)![1]);
      const stats = () => getJson<Stats>(`http://127.0.0.1:${port}/stats`);
      expect(await stats()).toMatchObject({ threads: 8, faults: [] });

      expect(await put(adminPort, "capacity*0.5, slow*3")).toMatchObject({ status: 200 });
      expect(await stats()).toMatchObject({
        threads: 4,
        faults: [
          { kind: "capacity", factor: 0.5 },
          { kind: "slow", factor: 3 },
        ],
      });
      await statuses(port, 1);
      // A constant 20 ms service time, three times slower: the request answered last spent 60 ms in the server.
      expect((await stats()).lastDelayMs).toBeGreaterThanOrEqual(60);
      const seenFrom = server.stdoutLines.length;
      await server.waitForLine(/"faults":\[\{"kind":"capacity","factor":0.5\}/, { stream: "stdout", fromIndex: seenFrom });

      expect(await put(adminPort, "errors*1")).toMatchObject({ status: 200 });
      expect(await statuses(port, 3)).toEqual([500, 500, 500]);
      expect(await stats()).toMatchObject({ threads: 8, errorsInjected: 3, faults: [{ kind: "errors", factor: 1 }] });

      expect(await put(adminPort, "errors*2")).toEqual({
        status: 400,
        text: '"errors*2": errors needs a share from 0 to 1, e.g. errors@10s+30s*0.2\n',
      });
      expect(await put(adminPort, "")).toMatchObject({ status: 200 });
      expect(await statuses(port, 3)).toEqual([200, 200, 200]);
      expect(await stats()).toMatchObject({ threads: 8, errorsInjected: 3, faults: [] });
      const lifted = server.stdoutLines.length;
      const line = await server.waitForLine(/^\{/, { stream: "stdout", fromIndex: lifted });
      expect(serverLines([line])[0]).toMatchObject({ threads: 8, faults: [] });
      expect(server.exitCode).toBeNull();
    },
    crash: async () => {
      const server = new ServerProcess(
        (listen) => new ChildProgram("server", resolve(REPO_ROOT, "server"), ["-listen", listen, "-json"], { cwd: REPO_ROOT }),
        false,
      );
      ownPrograms.push(server);
      const first = await server.start();
      const port = server.listeningPort;
      expect(await statuses(port, 1)).toEqual([200]);
      const client = spawnCli("client", ["-url", `http://127.0.0.1:${port}/api`, "-clients", "50", "-lambda", "0.5", "-interval", "500ms"]);
      await client.waitForLine(/^OK: [1-9]/, { stream: "stdout", timeoutMs: 30_000 });

      await server.crash();
      expect(isRunning(first.pid)).toBe(false);
      const refused = rawGet(port);
      const outcome = await new Promise<string>((settle) => {
        refused.socket.once("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
        refused.socket.once("connect", () => settle("connected"));
      });
      expect(outcome).toBe("ECONNREFUSED");
      // The client counts the refused connections as errors, and goes on.
      const down = client.stdoutLines.length;
      await client.waitForLine(/errors: [1-9]/, { stream: "stdout", fromIndex: down, timeoutMs: 30_000 });

      const second = await server.start();
      expect(second.pid).not.toBe(first.pid);
      expect(server.listeningPort).toBe(port);
      expect(await statuses(port, 1)).toEqual([200]);
      const up = client.stdoutLines.length;
      await client.waitForLine(/^OK: [1-9]/, { stream: "stdout", fromIndex: up, timeoutMs: 30_000 });
      expect(client.exitCode).toBeNull();
    },
    spike: async () => {
      const out = temporaryDir("thundering-herd-demo-");
      const run = demo([
        ...["-faults", "spike@1s+3s*2", "-observe", "1s", "-strategies", "exponential-backoff", "-out", out],
        ...["-client-args", "-clients 100 -lambda 1 -interval 500ms -seed 3"],
      ]);
      expect(await run.exited, run.stderrLines.join("\n")).toBe(0);
      const stderr = run.stderrLines.join("\n");
      const started = /spike: extra client pid (\d+) sending \(-clients 100\)/.exec(stderr);
      expect(started, stderr).not.toBeNull();
      const pid = Number(started![1]);
      expect(stderr).toContain(`spike over: extra client pid ${pid} stopped`);
      await eventually(() => !isRunning(pid), `the spike's client ${pid} gone`);
      const dir = reportDir(run);
      expect(readdirSync(dir)).toContain("exponential-backoff.spike-1.client.jsonl");
      const windows = clientReportLines(readFileSync(join(dir, "exponential-backoff.spike-1.client.jsonl"), "utf8").split("\n"));
      expect(windows.some((window) => window.attempts > 0)).toBe(true);
      const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as {
        settings: { faults: string };
        results: { phases: { faults: { kind: string }[] } }[];
      };
      expect(summary.settings.faults).toBe("spike@1s+3s*2");
      expect(summary.results[0]!.phases.faults.map((fault) => fault.kind)).toEqual(["spike"]);
    },
  });

  it("./server -admin-listen sets capacity, slow and errors on the model and lifts them; a bad body is a 400", () => runs("faultControl"));

  it("a crash refuses connections; the server started again on the same port serves; a client meanwhile keeps running", () =>
    runs("crash"));

  it("npm run demo -faults spike starts an extra client for the spike and stops it by its pid; its windows are kept", () => runs("spike"));
});

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { request } from "node:http";
import { loadAll } from "js-yaml";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.ts";
import { processState } from "../helpers/process-state.ts";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

/*
 * The server pod's shell wrapper, run here with sh as the pod would run it, the package's
 * bin replaced by the root shim and the port by an ephemeral loopback one: the crash
 * experiment's kill -STOP / -CONT through the pid file, and SIGTERM passed on.
 */

const manifest = loadAll(readFileSync(resolve(REPO_ROOT, "deploy/kubernetes/server.yaml"), "utf8")) as {
  kind: string;
  spec: { template: { spec: { containers: { args: string[] }[] } } };
}[];
const script = manifest.find((document) => document.kind === "Deployment")!.spec.template.spec.containers[0]!.args[0]!;

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** GET /api with a deadline: the status, or "no answer". */
function get(port: number, timeoutMs: number): Promise<number | "no answer"> {
  return new Promise((resolveStatus) => {
    const call = request({ host: "127.0.0.1", port, path: "/api", timeout: timeoutMs, agent: false }, (response) => {
      response.resume();
      resolveStatus(response.statusCode ?? 0);
    });
    call.on("timeout", () => {
      call.destroy();
      resolveStatus("no answer");
    });
    call.on("error", () => resolveStatus("no answer"));
    call.end();
  });
}

describe("the server pod's wrapper", () => {
  it("keeps the server's pid for kill -STOP and -CONT, and passes SIGTERM on, even to a stopped server", async () => {
    dir = mkdtempSync(join(tmpdir(), "wrapper-"));
    const pidFile = join(dir, "server.pid");
    const local = script
      .replace("node /app/dist/bin/thundering-herd.js server", `${resolve(REPO_ROOT, "server")}`)
      .replace("-listen :8070", "-listen 127.0.0.1:0 -report-interval 1h")
      .replaceAll("/tmp/server.pid", pidFile);
    const shell = spawnCli("server", ["-c", local], { command: "sh" });
    const line = await shell.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 20_000 });
    const port = Number(/:(\d+)\/api/.exec(line)![1]);
    const serverPid = Number(readFileSync(pidFile, "utf8"));
    expect(serverPid).not.toBe(shell.pid);
    expect(await get(port, 5_000)).toBe(200);

    // What `kubectl exec … sh -c 'kill -STOP "$(cat /tmp/server.pid)"'` does.
    process.kill(serverPid, "SIGSTOP");
    // The signal takes effect asynchronously: wait until the kernel shows it stopped.
    await eventually(() => processState(serverPid) === "T", "the server is stopped");
    expect(await get(port, 500)).toBe("no answer");
    process.kill(serverPid, "SIGCONT");
    expect(await get(port, 5_000)).toBe(200);

    // Deleting the pod while the server is stopped: the wrapper resumes it and ends it.
    process.kill(serverPid, "SIGSTOP");
    shell.signal("SIGTERM");
    expect(await shell.exited).toBe(0);
    expect(() => process.kill(serverPid, 0)).toThrow();
  });
});

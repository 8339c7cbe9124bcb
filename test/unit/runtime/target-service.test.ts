import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { signalGroup } from "../../../src/runtime/child-program.ts";
import { processGroupToSignal, TargetService } from "../../../src/runtime/target-service.ts";
import { afterThisTest } from "../../helpers/after-this-test.ts";
import { freePort } from "../../helpers/ports.ts";
import { eventually } from "../../helpers/eventually.ts";
import { groupStates } from "../../helpers/processes.ts";

/*
 * A service the user runs, as demo -target plays it, on real processes: a command started in its
 * own process group, stopped and resumed as a whole group, crashed and started again; a pid that is
 * not the demo's to stop refused in one line.
 */

const targets: TargetService[] = [];
afterEach(async () => {
  await Promise.all(targets.splice(0).map((target) => target.stop()));
});

/** A shell that starts an HTTP server as its child: a group of two, as a master and its worker. */
const serverCommand = (port: number) =>
  `${process.execPath} -e "require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')" & wait`;

const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });

describe("a target started by its command", () => {
  it("is ready once its URL accepts, stops and resumes as a whole group, and crashes and starts again", async () => {
    const port = await freePort();
    const target = new TargetService(new URL(`http://127.0.0.1:${port}/`), { kind: "command", command: serverCommand(port) });
    targets.push(target);
    await target.start();
    const group = target.processGroup!;
    expect(group).toBe(target.program!.pid);
    expect(groupStates(group).length).toBeGreaterThanOrEqual(2);
    // A signal is delivered when the kernel next schedules each process: wait for it.
    target.signal("SIGSTOP");
    await eventually(() => groupStates(group).every((state) => state === "T"), "every process of the group stopped");
    target.signal("SIGCONT");
    await eventually(() => !groupStates(group).some((state) => state === "T"), "every process of the group running again");
    await target.crash();
    // SIGKILL reaches the shell's child as the kernel schedules it: wait for its end.
    await eventually(() => groupStates(group).length === 0, "the crashed group gone");
    expect(await refusesConnections(port)).toBe(true);
    await target.start();
    expect(target.incarnations).toHaveLength(2);
    expect(await refusesConnections(port)).toBe(false);
    const second = target.processGroup!;
    await target.stop();
    await eventually(() => groupStates(second).length === 0, "the stopped group gone");
  });

  it("refuses to start a command on a port something already answers on: that one would pass for it", async () => {
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    afterThisTest(() => server.close());
    const port = (server.address() as { port: number }).port;
    const target = new TargetService(new URL(`http://127.0.0.1:${port}/`), { kind: "command", command: serverCommand(port) });
    targets.push(target);
    await expect(target.start()).rejects.toThrow(/^127\.0\.0\.1:\d+ accepts connections already: -target-cmd starts the service itself/);
    expect(target.incarnations).toHaveLength(0);
  });

  it("fails in one line, with what the command said, when it ends before accepting", async () => {
    const port = await freePort();
    const target = new TargetService(new URL(`http://127.0.0.1:${port}/`), {
      kind: "command",
      command: "echo no such service >&2; exit 3",
    });
    targets.push(target);
    await expect(target.start()).rejects.toThrow(
      /^the target command ended \(3\) before 127\.0\.0\.1:\d+ accepted a connection: no such service$/,
    );
  });
});

describe("a target given by its pid", () => {
  it("refuses pid 1, a pid that is gone, and the demo's own group, each in one line", async () => {
    expect(() => processGroupToSignal(1)).toThrow(UsageError);
    expect(() => processGroupToSignal(process.pid)).toThrow(
      /^-target-pid \d+: the process is in this program's own process group \d+; stopping it would stop this program too$/,
    );
    const gone = spawn("true");
    await new Promise((done) => gone.once("exit", done));
    expect(() => processGroupToSignal(gone.pid!)).toThrow(/^-target-pid \d+: no such process$/);
  });

  it.runIf(process.getuid?.() === 0)("refuses a process of another user's", async () => {
    const other = spawn("sleep", ["30"], { uid: 65534, gid: 65534, detached: true, stdio: "ignore" });
    afterThisTest(() => other.kill("SIGKILL"));
    await new Promise((done) => other.once("spawn", done));
    expect(() => processGroupToSignal(other.pid!)).toThrow(
      /^-target-pid \d+: the process belongs to uid 65534, not to this user \(uid 0\)$/,
    );
  });

  it("stops and resumes the pid's group, and resumes it on the way out", async () => {
    const sleeper = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    afterThisTest(() => signalGroup(sleeper.pid!, "SIGKILL"));
    await new Promise((done) => sleeper.once("spawn", done));
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    afterThisTest(() => server.close());
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
    const target = new TargetService(url, { kind: "pid", pid: sleeper.pid! });
    await target.start();
    target.signal("SIGSTOP");
    await eventually(() => groupStates(sleeper.pid!).join() === "T", "the sleeper stopped");
    await target.stop();
    await eventually(() => groupStates(sleeper.pid!).join() === "S", "the sleeper resumed, still running");
    // Gone during a run: a failure the run ends on, not a service to judge.
    expect(target.failure).toBeUndefined();
    process.kill(sleeper.pid!, "SIGKILL");
    await new Promise((done) => sleeper.once("exit", done));
    await eventually(() => target.failure !== undefined, "the target's end seen");
    expect(target.failure?.message).toBe(`the target's process ${sleeper.pid} ended during the experiment`);
  });
});

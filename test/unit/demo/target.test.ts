import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { describeFailure } from "../../../src/cli/usage-error.ts";
import { main as demoMain } from "../../../src/demo/main.ts";
import { afterThisTest } from "../../helpers/after-this-test.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";
import { freePort } from "../../helpers/ports.ts";

/*
 * demo -target on a target that cannot be played: one line, a non-zero exit, nothing left running
 * (the target is checked before any client starts: the launcher here refuses to start one).
 */

const noLaunch = () => {
  throw new Error("the demo started a client for a target it could not play");
};

async function demoFailure(args: readonly string[]) {
  const { io } = capturedIo();
  let thrown: unknown;
  try {
    await demoMain([...args, "-out", temporaryDir()], io, noLaunch);
  } catch (error) {
    thrown = error;
  }
  return describeFailure("demo", thrown, { debug: false });
}

describe("demo -target that cannot be played", () => {
  it("a URL nothing listens on, given a process to stop: one line, exit 1", async () => {
    const sleeper = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    afterThisTest(() => process.kill(-sleeper.pid!, "SIGKILL"));
    await new Promise((done) => sleeper.once("spawn", done));
    const port = await freePort();
    const failure = await demoFailure(["-target", `http://127.0.0.1:${port}/`, "-target-pid", String(sleeper.pid)]);
    expect(failure).toEqual({ exitCode: 1, text: `demo: cannot connect to 127.0.0.1:${port}: is the service running?\n` });
  });

  it("a command that ends before it accepts: one line with what it said, exit 1", async () => {
    const port = await freePort();
    const failure = await demoFailure(["-target", `http://127.0.0.1:${port}/`, "-target-cmd", "echo cannot bind >&2; exit 4"]);
    expect(failure).toEqual({
      exitCode: 1,
      text: `demo: the target command ended (4) before 127.0.0.1:${port} accepted a connection: cannot bind\n`,
    });
  });

  it("a pid that is not there: one line, exit 2", async () => {
    const gone = spawn("true");
    await new Promise((done) => gone.once("exit", done));
    const failure = await demoFailure(["-target", "http://127.0.0.1:1/", "-target-pid", String(gone.pid)]);
    expect(failure).toEqual({ exitCode: 2, text: `demo: -target-pid ${gone.pid}: no such process\nRun 'demo -h' for usage.\n` });
  });
});

import { spawn } from "node:child_process";
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { kernelSockets } from "../../../scripts/socket-count.ts";
import { afterThisTest } from "../../helpers/after-this-test.ts";
import { processState } from "../../helpers/process-state.ts";
import { createHttpTransport, type HttpTransport } from "../../../src/runner/attempt.ts";
import { localShare } from "../../../src/client/herd-share.ts";
import { createOccHttpTransport } from "../../../src/client/occ-transport.ts";
import { parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";
import type { AttemptResult } from "../../../src/model/outcome.ts";
import { eventually } from "../../helpers/eventually.ts";
import {
  bytesAReaderStoppedAtTheCapLetsThrough,
  type HostileKind,
  type HostileService,
  startHostileService,
} from "../../helpers/hostile-service.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";

/*
 * The client's HTTP transport (./client -url, and a middle tier's calls upstream) on real
 * loopback sockets: an attempt is a success only when its whole body arrived, and a body past
 * the cap is cut off there, its connection closed.
 */

const opened: { transport: HttpTransport; service?: HostileService }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map(async ({ transport, service }) => Promise.all([transport.close(), service?.close()])));
});

const MAX_BODY = 64 * 1024;

async function oneAttempt(url: string): Promise<AttemptResult> {
  const transport = createHttpTransport(url, 5_000, { maxBodyBytes: MAX_BODY });
  opened.push({ transport });
  return new Promise((resolve, reject) => transport.send({ done: resolve, notSent: () => reject(new Error("not sent")) }));
}

async function againstHostile(kind: HostileKind): Promise<{ result: AttemptResult; service: HostileService }> {
  const service = await startHostileService(kind);
  const result = await oneAttempt(service.url);
  opened.at(-1)!.service = service;
  return { result, service };
}

describe("the client's HTTP transport", () => {
  it("a whole body is a success, up to the cap", async () => {
    const server = await startScriptedServer((_request, response) => response.end("x".repeat(MAX_BODY)));
    expect(await oneAttempt(server.url)).toEqual({ outcome: "ok" });
  });

  it("sends on the connection freed last, and opens one more for each attempt in flight at once", async () => {
    const held: (() => void)[] = [];
    let holding = false;
    const server = await startScriptedServer((_request, response) => {
      if (holding) held.push(() => response.end("OK"));
      else response.end("OK");
    });
    const transport = createHttpTransport(server.url, 5_000);
    opened.push({ transport });
    const attempt = () =>
      new Promise<AttemptResult>((resolve, reject) => transport.send({ done: resolve, notSent: () => reject(new Error("not sent")) }));
    expect(await attempt()).toEqual({ outcome: "ok" });
    expect(await attempt()).toEqual({ outcome: "ok" });
    expect(server.openConnections()).toBe(1);
    // Three at once: the free connection and two new ones, each answered only once all three arrived.
    holding = true;
    const three = Promise.all([attempt(), attempt(), attempt()]);
    await eventually(() => held.length === 3, "the three attempts at the server");
    expect(server.openConnections()).toBe(3);
    for (const answer of held) answer();
    expect(await three).toEqual([{ outcome: "ok" }, { outcome: "ok" }, { outcome: "ok" }]);
  });

  it("never sends on the connection of an attempt aborted on the wire, which undici reopens for the aborted request", async () => {
    // A listener that accepts and never answers.
    const sockets: Socket[] = [];
    const server = createNetServer((socket) => {
      sockets.push(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    afterThisTest(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const socket of sockets) socket.destroy();
        }),
    );
    const transport = createHttpTransport(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, 5_000);
    opened.push({ transport });
    const silent = { done: () => {}, notSent: () => {} };
    const first = transport.send(silent);
    await eventually(() => sockets.length === 1, "the first attempt's connection");
    transport.abort(first);
    const second = transport.send(silent);
    expect(second.client).not.toBe(first.client);
    transport.abort(second);
  });

  it.each([
    ["broken-chunks", "other"],
    ["huge-content-length", "body-too-large"],
    ["endless-body", "body-too-large"],
  ] as const)("a 200 with a broken body (%s) is an error (%s), not a success", async (kind, errorKind) => {
    const { result } = await againstHostile(kind);
    expect(result).toEqual({ outcome: "error", errorKind });
  });

  it("an endless body is read no further than the cap: its connection is closed (the bytes written are bounded)", async () => {
    const { service } = await againstHostile("endless-body");
    await eventually(() => service.openConnections() === 0, "the transport closing the endless body's connection");
    expect(service.bytesPerClosedConnection[0]).toBeLessThanOrEqual(bytesAReaderStoppedAtTheCapLetsThrough(MAX_BODY));
  });
});

/** A listener whose process is stopped (SIGSTOP): its kernel completes handshakes into a queue of 1, then ignores SYNs. */
async function stoppedListener(): Promise<number> {
  const listening =
    "require('node:net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, function () { console.log(this.address().port) })";
  const child = spawn(process.execPath, ["-e", listening], { stdio: ["ignore", "pipe", "inherit"] });
  afterThisTest(() => child.kill("SIGKILL"));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (data: Buffer) => resolve(Number(String(data).trim())));
    child.once("error", reject);
  });
  child.kill("SIGSTOP");
  await eventually(() => processState(child.pid!) === "T", "the listener stopped");
  return port;
}

const localPortsConnecting = (port: number) =>
  kernelSockets()
    .filter(({ remotePort, state }) => remotePort === port && state === "SYN_SENT")
    .map(({ localPort }) => localPort);

describe("an attempt's timeout", () => {
  it("ends the attempt's connect too: no SYN of a user who left is sent again to open a connection", async () => {
    const port = await stoppedListener();
    // The stopped listener's queue holds two; the SYNs after them go unanswered.
    const fillers = Array.from({ length: 4 }, () => connect(port, "127.0.0.1").on("error", () => {}));
    afterThisTest(() => fillers.forEach((socket) => socket.destroy()));
    await eventually(() => localPortsConnecting(port).length > 0, "a SYN to the full queue unanswered");
    const fillersConnecting = new Set(localPortsConnecting(port));
    // undici's own connect timeout far off: only the attempt's end can end this connect.
    const transport = createHttpTransport(`http://127.0.0.1:${port}/`, 60_000);
    opened.push({ transport });
    const attempt = transport.send({ done: () => {}, notSent: () => {} });
    let attemptsOwn: number | undefined;
    await eventually(() => {
      attemptsOwn = localPortsConnecting(port).find((localPort) => !fillersConnecting.has(localPort));
      return attemptsOwn !== undefined;
    }, "the attempt's SYN unanswered");
    transport.abort(attempt);
    // Closing a socket closes it in the kernel at once: a connect left running would still be listed.
    expect(localPortsConnecting(port)).not.toContain(attemptsOwn);
  });
});

/** The first answers one ./client user (in process, a share of one) counts with these flags: its OKs and its errors. */
async function firstAnswersOfAClient(url: string, flags: readonly string[]): Promise<{ ok: number; errors: number }> {
  const parsed = parseClientArgs(["-clients", "1", "-lambda", "0.001", "-max-attempts", "1", "-url", url, ...flags]);
  if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
  const share = localShare(resolveClientOptions(parsed.values), { firstUser: 0, users: 1 }, 1);
  const seen = { ok: 0, errors: 0 };
  try {
    share.start(undefined);
    await eventually(async () => {
      const { counts } = await share.closeWindow();
      seen.ok += counts.ok;
      seen.errors += counts.errors;
      return seen.ok + seen.errors > 0;
    }, "the client's first answer");
    await share.finish();
  } finally {
    await share.close();
  }
  return seen;
}

describe("./client -max-body", () => {
  // 1.5 MiB: over the default cap of 1 MiB, under the 2 MiB the flag raises it to.
  const LONG_BODY = "x".repeat(1.5 * 1024 * 1024);

  it("a body over the default cap of 1 MiB is an error; -max-body raises the cap and it is a success", async () => {
    const server = await startScriptedServer((_request, response) => response.end(LONG_BODY));
    expect(await firstAnswersOfAClient(server.url, [])).toEqual({ ok: 0, errors: expect.any(Number) as number });
    expect(await firstAnswersOfAClient(server.url, ["-max-body", String(2 * 1024 * 1024)])).toEqual({
      ok: expect.any(Number) as number,
      errors: 0,
    });
  });
});

describe("the OCC workload's HTTP transport", () => {
  it("a 200 whose body is broken is a failed read, not a version", async () => {
    const service = await startHostileService("broken-chunks");
    const transport = createOccHttpTransport(service.url, 5_000);
    try {
      const version = await new Promise<number | undefined>((resolve) => transport.read(resolve));
      expect(version).toBeUndefined();
      expect([...transport.errorKinds.keys()]).toEqual(["other"]);
    } finally {
      await Promise.all([transport.close(), service.close()]);
    }
  });
});

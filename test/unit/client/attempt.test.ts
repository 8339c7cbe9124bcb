import { afterEach, describe, expect, it } from "vitest";
import { createHttpTransport, type HttpTransport } from "../../../src/client/attempt.ts";
import { createOccHttpTransport } from "../../../src/client/occ-transport.ts";
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

import { describe, expect, it } from "vitest";
import { redactUrl } from "../../../src/cli/redact-url.ts";
import { main as clientMain } from "../../../src/client/main.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";
import { parseServerArgs, resolveServerProgramOptions } from "../../../src/server/options.ts";
import { describeUpstream } from "../../../src/server/upstream.ts";

describe("redactUrl", () => {
  it.each([
    ["http://user:pass@127.0.0.1:8080/api?x=1", "http://***@127.0.0.1:8080/api?x=1"],
    ["https://user@example.com/", "https://***@example.com/"],
    ["http://:pass@127.0.0.1/", "http://***@127.0.0.1/"],
    ["http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api"],
    ["127.0.0.1:8080", "127.0.0.1:8080"],
    ["not a URL //user:pass@host/", "not a URL //***@host/"],
  ])("%s → %s", (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it("hides the credentials in a middle tier's start-up line", () => {
    const parsed = parseServerArgs(["-model", "queue", "-upstream", "http://tier:s3cret@127.0.0.1:8071/api"]);
    if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
    const line = describeUpstream(resolveServerProgramOptions(parsed.values).upstream!);
    expect(line).toMatch(/^calls http:\/\/\*\*\*@127\.0\.0\.1:8071\/api with /);
  });

  it("hides the credentials in the client's start-up line", async () => {
    const server = await startScriptedServer((_request, response) => response.end("OK"));
    const { io, stderr } = capturedIo();
    // The client's main leaves its signal handlers installed (a process ends with it): this worker removes them.
    const signals = ["SIGINT", "SIGTERM"] as const;
    const installed = new Set(signals.flatMap((signal) => process.listeners(signal)));
    try {
      await clientMain(["-url", server.url.replace("//", "//user:s3cret@"), "-clients", "1", "-duration", "50ms"], io);
    } finally {
      for (const signal of signals)
        for (const listener of process.listeners(signal)) if (!installed.has(listener)) process.off(signal, listener);
    }
    expect(stderr()).toMatch(/^client: .*target http:\/\/\*\*\*@127\.0\.0\.1:\d+\/api/);
    expect(stderr()).not.toContain("s3cret");
  });
});

import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { parseOccLine } from "../../src/contracts/occ-line.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";

/** ./server -workload occ on an ephemeral loopback port. */
async function spawnOccServer(args: readonly string[] = []) {
  const server = spawnCli("server", ["-workload", "occ", "-listen", "127.0.0.1:0", ...args]);
  const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/row/, { stream: "stderr", timeoutMs: 20_000 });
  const port = Number(/:(\d+)\/row/.exec(line)![1]);
  return { server, port, base: `http://127.0.0.1:${port}` };
}

interface RowStats {
  version: number;
  reads: number;
  writes: number;
  conflicts: number;
}

async function stats(base: string): Promise<RowStats> {
  return (await (await fetch(`${base}/stats`)).json()) as RowStats;
}

/** Bytes over a fresh connection; resolves with what came back once the server closes it. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", () => {});
    socket.write(bytes);
  });
}

describe("-workload occ", () => {
  it("real clients: every write lands exactly once, the server's version is the number of clients", async () => {
    const { base } = await spawnOccServer(["-net-delay", "2ms", "-net-delay-sd", "1ms", "-seed", "1"]);
    const client = spawnCli("client", [
      "-workload",
      "occ",
      "-url",
      `${base}/row`,
      "-clients",
      "20",
      "-strategy",
      "full-jitter",
      "-seed",
      "3",
      "-json",
    ]);
    expect(await client.exited).toBe(0);
    const json = client.stdoutLines.filter((line) => line.startsWith("{"));
    expect(json).toHaveLength(1);
    const result = parseOccLine(json[0]!, { file: "client stdout", line: 1 });
    expect(result).toMatchObject({ source: "client", strategy: "full-jitter", clients: 20, landed: 20, errors: 0, seed: 3 });
    expect(result.writes).toBeGreaterThanOrEqual(20);
    expect(result.calls).toBe(2 * result.writes);
    const row = await stats(base);
    // The server saw exactly the client's calls: no write was lost or counted twice.
    expect(row).toEqual({ version: 20, reads: result.writes, writes: result.writes, conflicts: result.writes - 20 });
  });

  it("the server: ETag on GET; PUT with If-Match 200 or 412, 428 without; survives junk, wrong methods and paths", async () => {
    const { base, port } = await spawnOccServer();
    const get = await fetch(`${base}/row`);
    expect([get.status, get.headers.get("etag"), await get.json()]).toEqual([200, '"0"', { version: 0 }]);
    const put = (headers: Record<string, string>) => fetch(`${base}/row`, { method: "PUT", headers, body: "x" });
    expect((await put({})).status).toBe(428);
    expect((await put({ "if-match": '"7"' })).status).toBe(412);
    expect((await put({ "if-match": 'W/"0"' })).status).toBe(412);
    const landed = await put({ "if-match": '"0"' });
    expect([landed.status, landed.headers.get("etag")]).toEqual([200, '"1"']);
    expect((await put({ "if-match": '"0"' })).status).toBe(412);
    expect((await fetch(`${base}/row`, { method: "DELETE" })).status).toBe(405);
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
    expect(await rawExchange(port, "GARBAGE\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    expect(
      await rawExchange(port, `PUT /row HTTP/1.1\r\nHost: x\r\nIf-Match: "1"\r\nContent-Length: 100000\r\n\r\n${"y".repeat(100_000)}`),
    ).toMatch(/^HTTP\/1\.1 413 /);
    expect(await rawExchange(port, "PUT /row HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    // 428 is no write; the three refused and the one landed are.
    expect(await stats(base)).toEqual({ version: 1, reads: 1, writes: 4, conflicts: 3 });
  });

  it("a client whose server is not there reports its unlanded writes in one line and exits 1", async () => {
    const { server, base } = await spawnOccServer();
    server.signal("SIGTERM");
    await server.exited;
    const client = spawnCli("client", ["-workload", "occ", "-url", `${base}/row`, "-clients", "3", "-duration", "300ms", "-seed", "1"]);
    expect(await client.exited).toBe(1);
    expect(client.stdoutLines.filter((line) => line !== "")).toEqual([
      expect.stringMatching(
        /^OCC: 3 clients, full-jitter: 3 clients' writes not landed after 300ms \(-duration\); 0 landed; .* errors \(refused \d+\); mean call [\d.]+ ms$/,
      ),
    ]);
    expect(client.stderrLines.join("\n")).not.toMatch(/\n\s+at /);
  });
});

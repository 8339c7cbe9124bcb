/**
 * The server's resident memory against issue 37's target, ≤ 50 MB at steady state
 * (`npm run bench -- server-memory`). Prints figures, asserts nothing. Two servers, one after
 * the other, each on a free loopback port in its own process group, stopped by it also on
 * error and on Ctrl-C:
 *
 * - `./server` as a user starts it (its default model, baseDelay 100 ms);
 * - the floor: a bare `node:http` server that answers every request after 100 ms, nothing else.
 *
 * Each is read at rest (VmRSS 3 s after it listens), then under `./client` with its defaults
 * (1 000 users at λ 10 s, about 95 req/s) for 30 s, read every 10 s: steady state is the
 * largest of those reads.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { memoryMb } from "./proc-usage.ts";
import { TrackedPrograms } from "./tracked-programs.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const TARGET_MB = 50;
const REST_MS = 3_000;
const LOAD_READS = 3;
const READ_EVERY_MS = 10_000;

const BARE_SERVER = [
  'import { createServer } from "node:http";',
  "createServer((request, response) => setTimeout(() => response.end('OK'), 100))",
  '  .listen(0, "127.0.0.1", function () { process.stderr.write(`listening on http://127.0.0.1:${this.address().port}/api\\n`); });',
].join("\n");

interface Figures {
  readonly restMb: number;
  readonly loadMb: readonly number[];
  readonly okPerSec: string;
}

const programs = new TrackedPrograms();
const start = (name: string, command: string, args: readonly string[]) => programs.start(name, command, args, { cwd: REPO_ROOT });

async function measure(name: string, command: string, args: readonly string[]): Promise<Figures> {
  const server = start(name, command, args);
  try {
    const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 30_000 });
    const url = /http:\/\/127\.0\.0\.1:\d+\/api/.exec(line)![0];
    await sleep(REST_MS);
    const restMb = memoryMb(server.pid).rssMb;
    const client = start("client", resolve(REPO_ROOT, "client"), ["-url", url]);
    const loadMb: number[] = [];
    try {
      for (let read = 0; read < LOAD_READS; read++) {
        await sleep(READ_EVERY_MS);
        loadMb.push(memoryMb(server.pid).rssMb);
      }
    } finally {
      await client.stop();
    }
    const reports = client.stdout.map((one) => one.text).filter((text) => text.startsWith("OK: "));
    const okPerSec = /^OK: ([\d.]+) req\/sec/.exec(reports.at(-1) ?? "")?.[1];
    return { restMb, loadMb, okPerSec: okPerSec ?? "?" };
  } finally {
    await server.stop();
  }
}

const mb = (value: number) => value.toFixed(1);

async function main(): Promise<void> {
  const kernel = readFileSync("/proc/version", "utf8").split(" ").slice(0, 3).join(" ");
  process.stdout.write(`server memory: node ${process.version}, ${kernel}\n`);
  const ours = await measure("server", resolve(REPO_ROOT, "server"), ["-listen", "127.0.0.1:0"]);
  const bare = await measure("bare node:http", process.execPath, ["--input-type=module", "-e", BARE_SERVER]);
  const rows = [
    ["", "at rest", "under ./client (10, 20, 30 s)", "steady (largest)", "OK/s"],
    ...[
      ["./server", ours],
      ["bare node:http (the floor)", bare],
    ].map(([name, figures]) => {
      const { restMb, loadMb, okPerSec } = figures as Figures;
      return [name as string, `${mb(restMb)} MB`, loadMb.map(mb).join(", ") + " MB", `${mb(Math.max(...loadMb))} MB`, okPerSec];
    }),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")}\n`);
  const steady = Math.max(...ours.loadMb);
  process.stdout.write(
    `server RSS at steady state: ${mb(steady)} MB, target ≤ ${TARGET_MB} MB: ${steady <= TARGET_MB ? "met" : "missed"}; ` +
      `${mb(steady - Math.max(...bare.loadMb))} MB above a bare node:http server under the same load\n`,
  );
}

main().catch((error: unknown) => {
  programs.killAll();
  process.stderr.write(`bench server-memory: ${(error as Error).message}\n`);
  process.exit(1);
});

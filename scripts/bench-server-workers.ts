/**
 * `./server -workers` against issue 37's target, 50 000 requests/s at 100 ms within 2 % on 16 cores
 * (`npm run bench -- server-workers [users]`). Prints figures, asserts nothing. With fewer cores it
 * cannot measure the target: it measures what one server process and several cost per request
 * at the same load, and projects the 16 cores from them, marked as a projection.
 *
 * For 1 process, then one per core: `./server -limit 1000000` (never the bottleneck: its delay
 * stays 100 ms) and `./client -lambda 10` with `users` users (20 000 by default: about 2 000
 * requests/s), 5 s of warm-up, then 20 s measured: the server processes' CPU (utime + stime of the
 * first process and of each process it started, from /proc), the first process's own, and the
 * client's OK rate against N / (λ + 0.1 s). Each program runs in its own process group, stopped
 * by it also on error and on Ctrl-C.
 */
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cpuSeconds } from "./proc-usage.ts";
import { TrackedPrograms } from "./tracked-programs.ts";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const WARM_UP_MS = 5_000;
const MEASURED_MS = 20_000;
const LAMBDA_S = 10;
const TARGET = { cores: 16, requestsPerSec: 50_000, within: 0.02 } as const;

const programs = new TrackedPrograms();
const start = (name: string, args: readonly string[]) => programs.start(name, resolve(REPO_ROOT, name), args, { cwd: REPO_ROOT });

interface Row {
  readonly processes: number;
  readonly okPerSec: number;
  readonly expectedPerSec: number;
  /** CPU seconds per second of every server process, and of the first (the primary, with -workers) alone. */
  readonly serverCores: number;
  readonly primaryCores: number;
}

async function measure(processes: number, users: number): Promise<Row> {
  const server = start("server", ["-listen", "127.0.0.1:0", "-limit", "1000000", "-workers", String(processes)]);
  try {
    const line = await server.waitForLine(/listening on http:\/\/127\.0\.0\.1:\d+\/api/, { stream: "stderr", timeoutMs: 30_000 });
    const url = /http:\/\/127\.0\.0\.1:\d+\/api/.exec(line)![0];
    const pids = [server.pid, ...[...(/processes: ([\d, ]+)\)/.exec(line)?.[1] ?? "").matchAll(/\d+/g)].map(Number)];
    const client = start("client", ["-url", url, "-clients", String(users), "-lambda", String(LAMBDA_S), "-seed", "1", "-json"]);
    try {
      await sleep(WARM_UP_MS);
      const before = pids.map(cpuSeconds);
      const windowsBefore = client.stdout.length;
      await sleep(MEASURED_MS);
      const after = pids.map(cpuSeconds);
      const windows = client.stdout
        .slice(windowsBefore)
        .map((one) => JSON.parse(one.text) as { okPerSec?: number })
        .filter((window) => window.okPerSec !== undefined);
      const okPerSec = windows.reduce((sum, window) => sum + window.okPerSec!, 0) / Math.max(1, windows.length);
      const seconds = MEASURED_MS / 1000;
      return {
        processes,
        okPerSec,
        expectedPerSec: users / (LAMBDA_S + 0.1),
        serverCores: after.reduce((sum, cpu, index) => sum + cpu - before[index]!, 0) / seconds,
        primaryCores: (after[0]! - before[0]!) / seconds,
      };
    } finally {
      await client.stop();
    }
  } finally {
    await server.stop();
  }
}

const users = Number(process.argv[2] ?? 20_000);
const counts = [...new Set([1, availableParallelism()])];
const rows: Row[] = [];
try {
  for (const processes of counts) rows.push(await measure(processes, users));
} catch (error) {
  programs.killAll();
  throw error;
}

process.stdout.write(
  `server processes at ${users.toLocaleString("en")} users, λ ${LAMBDA_S} s (${availableParallelism()} cores, the client on them too):\n`,
);
for (const row of rows) {
  const deviation = (row.okPerSec / row.expectedPerSec - 1) * 100;
  const perCore = row.okPerSec / row.serverCores;
  process.stdout.write(
    `  -workers ${row.processes}: ${row.okPerSec.toFixed(0)} OK/s (expected ${row.expectedPerSec.toFixed(0)}, ${deviation.toFixed(2)} %), ` +
      `server ${row.serverCores.toFixed(3)} cores (first process ${row.primaryCores.toFixed(3)}), ` +
      `${(1e6 / perCore).toFixed(0)} µs of CPU per request, ${perCore.toFixed(0)} requests/s per server core\n`,
  );
}
const several = rows.at(-1)!;
if (availableParallelism() >= TARGET.cores) {
  process.stdout.write("  (the 16-core target needs a client elsewhere or a larger herd: run it with 500000 users)\n");
} else if (several.processes > 1) {
  // The workers' cost per request stays; the first process's exchanges grow with the processes it keeps in step.
  const workersCores = several.serverCores - several.primaryCores;
  const perWorkerCore = several.okPerSec / workersCores;
  const primaryPerProcess = several.primaryCores / several.processes;
  // One process per core, on the cores the first process leaves them.
  const projected = perWorkerCore * TARGET.cores * (1 - primaryPerProcess);
  process.stdout.write(
    `projection, not a measurement: ${TARGET.cores} cores, ${TARGET.cores} processes at ${perWorkerCore.toFixed(0)} requests/s per core ` +
      `and the first process at ${(primaryPerProcess * 1000).toFixed(1)} ms of CPU a second per process it keeps in step: ` +
      `about ${Math.round(projected).toLocaleString("en")} requests/s, target ${TARGET.requestsPerSec.toLocaleString("en")}: ` +
      `${projected >= TARGET.requestsPerSec ? "met in projection" : "missed in projection"}\n`,
  );
}

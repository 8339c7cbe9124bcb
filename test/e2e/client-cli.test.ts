import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { decorrelatedJitterPolicy } from "../../src/backoff/index.ts";
import { firstWait, initialUserState, type RetryConfig } from "../../src/model/client-loop.ts";
import { afterAttempt } from "../helpers/retry-config.ts";
import { streamRandom } from "../../src/backoff/random.ts";
import { startScriptedServer } from "../helpers/scripted-server.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

interface WindowJson {
  ok: number;
  errors: number;
  timedout: number;
  gaveUp: number;
  attempts: number;
  retries: number;
  okPerSec: number;
  errorKinds: Record<string, number>;
  summary?: boolean;
  partial?: boolean;
}

/**
 * Observed gaps between attempts against the policy's waits: never shorter (a gap is the wait
 * plus a round trip), typically a few ms longer; a loaded machine may delay one timer a lot,
 * so single gaps get a wide bound and the median lateness a tight one.
 */
function expectGapsFollow(gaps: readonly number[], waits: readonly number[]): void {
  expect(gaps.length).toBeGreaterThanOrEqual(waits.length);
  const lateness = waits.map((wait, index) => gaps[index]! - wait);
  for (const late of lateness) {
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(250);
  }
  const sorted = [...lateness].sort((a, b) => a - b);
  expect(sorted[Math.floor(sorted.length / 2)]!, `lateness ${lateness.join(", ")} ms`).toBeLessThan(40);
}

const jsonLines = (lines: string[]) => lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as WindowJson);
const REFERENCE_PREFIX = /^OK: \d+\.\d\d req\/sec, errors: \d+\.\d\d req\/sec, timedout: \d+\.\d\d req\/sec/;

describe("./client", () => {
  it("prints -h with the reference flags and every strategy, and exits 0", async () => {
    const cli = spawnCli("client", ["-help"]);
    expect(await cli.exited).toBe(0);
    const help = cli.stdoutLines.join("\n");
    for (const text of [
      "-clients n",
      "(default: 1000)",
      "-lambda seconds",
      "-timeout duration",
      "(default: 2s)",
      "-exponential-backoff",
      "-simple-backoff-delay duration",
      "(default: 100ms)",
      "-url url",
      "-strategy name",
      "decorrelated-jitter",
      "-max-attempts n",
      "-retry-budget",
      "-interval duration",
      "-json",
      "-duration duration",
      "-seed n",
    ]) {
      expect(help).toContain(text);
    }
  });

  it.each([
    [["-clients", "many"], 'client: invalid value "many" for flag -clients: must be an integer'],
    [
      ["-strategy", "hope"],
      'client: invalid value "hope" for flag -strategy: must be one of fixed, constant, exponential-backoff, reference, exponential, full-jitter, equal-jitter, decorrelated-jitter, table, google, grpc',
    ],
    [
      ["-exponential-backoff", "-strategy", "grpc"],
      "client: -exponential-backoff selects -strategy exponential-backoff; it cannot be combined with -strategy grpc",
    ],
    [["-strategy", "fixed", "-jitter", "0.2"], "client: -jitter does not apply to -strategy fixed (it takes -simple-backoff-delay)"],
    [
      ["-strategy", "exponential-backoff", "-jitter", "0.1"],
      "client: -jitter does not apply to -strategy exponential-backoff (it takes -min-delay, -max-delay, -backoff-factor, -jitter-sd)",
    ],
    [
      ["-strategy", "exponential", "-min-delay", "2s", "-max-delay", "1s"],
      "client: invalid settings for -strategy exponential: minDelayMs must be <= maxDelayMs (got 2000 > 1000)",
    ],
    [["-url", "ftp://x"], 'client: invalid value "ftp://x" for flag -url: must be an http:// or https:// URL'],
    [["-shard", "3/3"], 'client: invalid value "3/3" for flag -shard: the shard index must be 0 to 2'],
    [
      ["-start-at", "noon"],
      'client: invalid value "noon" for flag -start-at: must be an RFC 3339 time such as 2025-06-21T22:11:08Z, or epoch milliseconds',
    ],
    [["-workers", "0"], 'client: invalid value "0" for flag -workers: must be >= 1'],
  ])("rejects %j with one line, a hint and exit 2", async (args, message) => {
    const cli = spawnCli("client", args);
    expect(await cli.exited).toBe(2);
    expect(cli.stderrLines.filter((line) => line !== "")).toEqual([message, "Run 'client -h' for usage."]);
  });

  it("offers the promised rate against the real server: N / (lambda + service time)", async () => {
    const { url } = await spawnServer(["-baseDelay", "10ms"]);
    const cli = spawnCli("client", [
      "-url",
      url,
      "-clients",
      "200",
      "-lambda",
      "0.2",
      "-interval",
      "1s",
      "-duration",
      "6.5s",
      "-json",
      "-seed",
      "1",
    ]);
    expect(await cli.exited).toBe(0);
    const windows = jsonLines(cli.stdoutLines).filter((window) => !window.summary && !window.partial);
    expect(windows).toHaveLength(6);
    const measured = windows.slice(2).reduce((sum, window) => sum + window.ok, 0) / 4;
    const expected = 200 / (0.2 + 0.0105);
    // A Poisson count of ~3 800 has a spread of ~1.6 %; allow five of those.
    expect(measured).toBeGreaterThan(expected * 0.92);
    expect(measured).toBeLessThan(expected * 1.08);
    expect(windows.every((window) => window.errors === 0 && window.timedout === 0)).toBe(true);
  });

  it("prints the reference line every interval and a summary at the end", async () => {
    const { url } = await spawnServer(["-baseDelay", "5ms"]);
    const cli = spawnCli("client", ["-url", url, "-clients", "20", "-lambda", "0.1", "-interval", "500ms", "-duration", "1.2s"]);
    expect(await cli.exited).toBe(0);
    const lines = cli.stdoutLines.filter((line) => line !== "");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines.slice(0, -1)) expect(line).toMatch(REFERENCE_PREFIX);
    expect(lines.at(-1)).toMatch(/^summary: 1\.2s, attempts \d+ \(\d+\.\d\d req\/sec\), OK \d+/);
    expect(cli.stderrLines[0]).toMatch(/^client: 20 clients, lambda 100ms, timeout 2s, strategy fixed \(delayMs 100\), seed \d+, target/);
  });

  it("prints the same lines with worker threads: the reference line, then the summary; JSON with the same fields", async () => {
    const { url } = await spawnServer(["-baseDelay", "5ms"]);
    const args = ["-url", url, "-clients", "60", "-lambda", "0.1", "-interval", "500ms", "-duration", "1.2s", "-seed", "4"];
    const text = spawnCli("client", [...args, "-workers", "3"]);
    expect(await text.exited).toBe(0);
    const lines = text.stdoutLines.filter((line) => line !== "");
    expect(lines).toHaveLength(4);
    for (const line of lines.slice(0, -1)) expect(line).toMatch(REFERENCE_PREFIX);
    expect(lines.at(-1)).toMatch(/^summary: 1\.2s, attempts \d+ \(\d+\.\d\d req\/sec\), OK \d+/);
    expect(text.stderrLines[0]).toMatch(/^client: 60 clients \(3 worker threads\), lambda 100ms/);
    const [threads, one] = [spawnCli("client", [...args, "-workers", "3", "-json"]), spawnCli("client", [...args, "-json"])];
    expect(await threads.exited).toBe(0);
    expect(await one.exited).toBe(0);
    const [threadObjects, oneObjects] = [jsonLines(threads.stdoutLines), jsonLines(one.stdoutLines)];
    expect(threadObjects.map((object) => Object.keys(object))).toEqual(oneObjects.map((object) => Object.keys(object)));
    // Every window's attempts are counted once: the windows add up to the summary (the last window is whole).
    const windows = threadObjects.filter((object) => !object.summary);
    expect(windows.reduce((sum, window) => sum + window.attempts, 0)).toBe(threadObjects.at(-1)!.attempts);
    expect(threadObjects.at(-1)!.ok).toBeGreaterThan(300);
  });

  it("waits for -start-at, and stops cleanly when interrupted before it", async () => {
    const cli = spawnCli("client", [
      "-url",
      "http://127.0.0.1:9/api",
      "-start-at",
      new Date(Date.now() + 600_000).toISOString(),
      "-workers",
      "2",
    ]);
    await cli.waitForLine(/^client: starting at \S+, in \d+m/, { stream: "stderr" });
    cli.signal("SIGINT");
    expect(await cli.exited).toBe(0);
    expect(cli.stdoutLines.filter((line) => line !== "")).toEqual(["summary: stopped by SIGINT before the start"]);
  });

  it("retries on the wire exactly as the policy says: exponential growth without jitter", async () => {
    const server = await startScriptedServer((_request, response) => response.writeHead(503).end());
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-clients",
      "1",
      "-lambda",
      "0.01",
      "-strategy",
      "exponential",
      "-min-delay",
      "10ms",
      "-backoff-factor",
      "2",
      "-jitter",
      "0",
      "-duration",
      "1.4s",
      "-seed",
      "3",
    ]);
    expect(await cli.exited).toBe(0);
    const gaps = server.arrivals.slice(1).map((time, index) => time - server.arrivals[index]!);
    // min(10ms * 2^n): 20, 40, 80, 160, 320 ms after each 503 (which takes a millisecond or so).
    expectGapsFollow(gaps, [20, 40, 80, 160, 320]);
  });

  it("retries on the wire in the seeded schedule of decorrelated jitter", async () => {
    const server = await startScriptedServer((_request, response) => response.writeHead(500).end());
    const seed = 12;
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-clients",
      "1",
      "-lambda",
      "0.01",
      "-strategy",
      "decorrelated-jitter",
      "-min-delay",
      "20ms",
      "-max-delay",
      "400ms",
      "-duration",
      "2s",
      "-seed",
      String(seed),
    ]);
    expect(await cli.exited).toBe(0);
    // Replay the same user (user 0, drawing from its own stream of the seed) through the pure model.
    const retry: RetryConfig = {
      backoff: decorrelatedJitterPolicy({ baseMs: 20, capMs: 400 }),
      thinkTimeMeanMs: 10,
      maxAttempts: Infinity,
      budget: undefined,
    };
    const random = streamRandom(seed, 0);
    const state = initialUserState(retry);
    firstWait(retry, state, random);
    const expectedWaits = Array.from({ length: 6 }, () => afterAttempt(retry, state, "error", random).waitMs);
    const gaps = server.arrivals.slice(1, 7).map((time, index) => time - server.arrivals[index]!);
    expectGapsFollow(gaps, expectedWaits);
  });

  it("gives up when the retry budget refuses a retry, and counts it", async () => {
    const server = await startScriptedServer((_request, response) => response.writeHead(503).end());
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-clients",
      "1",
      "-lambda",
      "0.02",
      "-retry-budget",
      "-budget-tokens",
      "4",
      "-budget-ratio",
      "0.5",
      "-duration",
      "1.5s",
      "-json",
      "-interval",
      "10s",
    ]);
    expect(await cli.exited).toBe(0);
    const summary = jsonLines(cli.stdoutLines).find((line) => line.summary)!;
    // 4 tokens: the first failure leaves 3 (> 2, retry); every later failure finds <= 2.
    expect(summary.retries).toBe(1);
    expect(summary.attempts).toBeGreaterThan(5);
    expect(summary.gaveUp).toBeGreaterThanOrEqual(summary.errors - 1);
    expect(summary.errors).toBe(summary.errorKinds["http-5xx"]);
  });

  it("times out an unanswered request and closes its connection", async () => {
    const server = await startScriptedServer(() => {}); // never answers
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-clients",
      "3",
      "-lambda",
      "0.05",
      "-timeout",
      "200ms",
      "-simple-backoff-delay",
      "50ms",
      "-duration",
      "1.5s",
      "-json",
      "-interval",
      "10s",
    ]);
    expect(await cli.exited).toBe(0);
    const summary = jsonLines(cli.stdoutLines).find((line) => line.summary)!;
    expect(summary.ok).toBe(0);
    expect(summary.errors).toBe(0);
    expect(summary.timedout).toBeGreaterThanOrEqual(9);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Every timed-out request's connection was torn down (plus the ones aborted at exit).
    expect(server.closedByClient()).toBeGreaterThanOrEqual(summary.timedout);
    expect(server.arrivals.length).toBe(server.closedByClient());
  });

  it("counts refused connections as errors, keeps going, and exits 0 with a summary on SIGINT", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    const cli = spawnCli("client", [
      "-url",
      `http://127.0.0.1:${port}/api`,
      "-clients",
      "50",
      "-lambda",
      "0.05",
      "-simple-backoff-delay",
      "10ms",
      "-interval",
      "300ms",
      "-json",
    ]);
    await cli.waitForLine(/"errors":[1-9]/, { stream: "stdout" });
    await cli.waitForLine(/"errors":[1-9]/, { stream: "stdout", fromIndex: 1 });
    cli.signal("SIGINT");
    expect(await cli.exited).toBe(0);
    const summary = jsonLines(cli.stdoutLines).find((line) => line.summary)!;
    expect(summary.errorKinds.refused).toBe(summary.errors);
    expect(summary.errors).toBeGreaterThan(100);
    expect(cli.stderrLines.join("\n")).not.toMatch(/unhandled|uncaught|at .*\.ts:\d+/);
  });

  it("counts running out of file descriptors as errors and keeps going", async () => {
    const server = await startScriptedServer(() => {}); // holds every request: each needs its own socket
    const cli = spawnCli(
      "client",
      ["-url", server.url, "-clients", "150", "-lambda", "0.05", "-timeout", "1s", "-interval", "500ms", "-duration", "3s", "-json"],
      { shell: "ulimit -n 64" },
    );
    expect(await cli.exited).toBe(0);
    const summary = jsonLines(cli.stdoutLines).find((line) => line.summary)!;
    expect(summary.errorKinds["no-file-descriptor"]).toBeGreaterThan(0);
    expect(summary.timedout).toBeGreaterThan(0); // the sockets it did get were used
    expect(cli.stderrLines.join("\n")).not.toMatch(/uncaught|unhandled|\n\s+at /);
  });
});

import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { decorrelatedJitterPolicy } from "../../src/backoff/index.ts";
import { firstWait, initialUserState, type RetryConfig } from "../../src/model/client-loop.ts";
import { afterAttempt } from "../helpers/retry-config.ts";
import { streamRandom } from "../../src/backoff/random.ts";
import { eventually } from "../helpers/eventually.ts";
import { clientReportLines, REFERENCE_PREFIX, windowsAndSummary } from "../helpers/output-lines.ts";
import { runTogether } from "../helpers/run-together.ts";
import { startScriptedServer } from "../helpers/scripted-server.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

/**
 * Observed gaps between attempts against the policy's waits. A retry is sent only after its
 * wait has passed since the answer, which came after the attempt arrived, so no gap can be
 * shorter than its wait, however loaded the machine. (How late the timers are is a figure
 * of `npm run bench -- client`.)
 */
function expectGapsNeverShorter(arrivals: readonly number[], waits: readonly number[]): void {
  const gaps = arrivals.slice(1, waits.length + 1).map((time, index) => time - arrivals[index]!);
  expect(gaps).toHaveLength(waits.length);
  gaps.forEach((gap, index) =>
    expect(gap, `gap ${index}: ${gaps.join(", ")} ms for waits ${waits.join(", ")}`).toBeGreaterThanOrEqual(waits[index]!),
  );
}

/**
 * The text summary of a run stopped by -duration: it covers the run as it happened, so never
 * less than the duration, and more when the machine made its timer fire late.
 */
function expectSummaryCovering(line: string | undefined, durationS: number): void {
  const match = /^summary: (\d+\.\d)s, attempts \d+ \(\d+\.\d\d req\/sec\), OK \d+/.exec(line ?? "");
  expect(match, line).not.toBeNull();
  expect(Number(match![1]), line).toBeGreaterThanOrEqual(durationS);
}

describe("./client", () => {
  /** A client with the gRPC retry budget (by `flag`) against a server that answers 503, judged when it is interrupted. */
  async function budgetRun(flag: readonly string[]): Promise<void> {
    const server = await startScriptedServer((_request, response) => response.writeHead(503).end());
    const cli = spawnCli("client", [
      "-url",
      server.url,
      "-clients",
      "1",
      "-lambda",
      "0.02",
      ...flag,
      "-budget-tokens",
      "4",
      "-budget-ratio",
      "0.5",
      "-json",
      "-interval",
      "1h",
    ]);
    await eventually(() => server.arrivals.length >= 8, "eight attempts");
    cli.signal("SIGINT");
    expect(await cli.exited).toBe(0);
    const { summary } = windowsAndSummary(cli.stdoutLines);
    // 4 tokens: the first failure leaves 3 (> 2, retry); every later failure finds <= 2.
    expect(summary.retries).toBe(1);
    expect(summary.attempts).toBeGreaterThanOrEqual(8);
    expect(summary.gaveUp).toBeGreaterThanOrEqual(summary.errors - 1);
    expect(summary.errors).toBe(summary.errorKinds["http-5xx"]);
    // Every attempt reached the server, but one the exit cut short on its way.
    expect(summary.attempts - server.arrivals.length).toBeGreaterThanOrEqual(0);
    expect(summary.attempts - server.arrivals.length).toBeLessThanOrEqual(1);
  }

  // Each test's run mostly waits (for a window, a server's answers, attempts to arrive): all of them run side by side.
  const runs = runTogether({
    help: async () => {
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
    },
    counted: async () => {
      // The rate it offers (N / (lambda + service time)) is checked on a virtual clock in the
      // herd's unit tests and measured by `npm run bench -- client`.
      const { url } = await spawnServer(["-baseDelay", "10ms"]);
      const cli = spawnCli("client", [
        "-url",
        url,
        "-clients",
        "50",
        "-lambda",
        "0.2",
        "-interval",
        "1s",
        // One whole window and a last one of half a second: enough to check that they add up.
        "-duration",
        "1.5s",
        "-json",
        "-seed",
        "1",
      ]);
      expect(await cli.exited).toBe(0);
      const { windows, summary } = windowsAndSummary(cli.stdoutLines);
      expect(windows.length).toBeGreaterThanOrEqual(1);
      expect(summary.ok).toBeGreaterThan(0);
      expect(summary.errors + summary.timedout).toBe(0);
      // Windows follow one another without gap or overlap; only a last one shorter than 100 ms is
      // left out of the printed windows (folded into the summary).
      const printedMs = windows.reduce((sum, window) => sum + window.windowMs, 0);
      const foldedMs = summary.windowMs - printedMs;
      expect(foldedMs).toBeGreaterThanOrEqual(-1e-6);
      expect(foldedMs).toBeLessThan(100);
      const sum = (key: "ok" | "attempts" | "retries") => windows.reduce((total, window) => total + window[key], 0);
      for (const key of ["ok", "attempts", "retries"] as const) {
        if (foldedMs < 1e-6) expect(sum(key), key).toBe(summary[key]);
        else expect(sum(key), key).toBeLessThanOrEqual(summary[key]);
      }
    },
    referenceLines: async () => {
      const { url } = await spawnServer(["-baseDelay", "5ms"]);
      const cli = spawnCli("client", ["-url", url, "-clients", "20", "-lambda", "0.1", "-interval", "500ms", "-duration", "1.2s"]);
      expect(await cli.exited).toBe(0);
      const lines = cli.stdoutLines.filter((line) => line !== "");
      expect(lines.length).toBeGreaterThanOrEqual(2); // the first window closes at 0.5 s, before the end at 1.2 s
      for (const line of lines.slice(0, -1)) expect(line).toMatch(REFERENCE_PREFIX);
      expectSummaryCovering(lines.at(-1), 1.2);
      expect(cli.stderrLines[0]).toMatch(/^client: 20 clients, lambda 100ms, timeout 2s, strategy fixed \(delayMs 100\), seed \d+, target/);
    },
    threads: async () => {
      const { url } = await spawnServer(["-baseDelay", "5ms"]);
      // A -duration on the window grid ends with a whole window, however late the timers fire
      // (a late window closes at the grid point just passed): exactly two windows, whatever the
      // machine's load; one line each, not one per thread.
      const args = ["-url", url, "-clients", "60", "-lambda", "0.1", "-interval", "500ms", "-duration", "1s", "-seed", "4"];
      // Three independent runs, side by side.
      const [text, threads, one] = [
        spawnCli("client", [...args, "-workers", "3"]),
        spawnCli("client", [...args, "-workers", "3", "-json"]),
        spawnCli("client", [...args, "-json"]),
      ];
      expect(await text.exited).toBe(0);
      const lines = text.stdoutLines.filter((line) => line !== "");
      expect(lines).toHaveLength(3);
      for (const line of lines.slice(0, -1)) expect(line).toMatch(REFERENCE_PREFIX);
      expectSummaryCovering(lines.at(-1), 1);
      expect(text.stderrLines[0]).toMatch(/^client: 60 clients \(3 worker threads\), lambda 100ms/);
      expect(await threads.exited).toBe(0);
      expect(await one.exited).toBe(0);
      const [threadObjects, oneObjects] = [clientReportLines(threads.stdoutLines), clientReportLines(one.stdoutLines)];
      expect(threadObjects.map((object) => Object.keys(object))).toEqual(oneObjects.map((object) => Object.keys(object)));
      // Every window's attempts are counted once: the windows add up to the summary (the last window is whole).
      const windows = threadObjects.filter((object) => !object.summary);
      expect(windows.reduce((sum, window) => sum + window.attempts, 0)).toBe(threadObjects.at(-1)!.attempts);
      // That every thread's users work, each exactly as it would in one process, is counted exactly in
      // shards.test.ts (3 worker threads against the virtual run); here two real-time runs side by side
      // would compare only how the machine's load fell on each.
    },
    startAt: async () => {
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
    },
    exponentialGaps: async () => {
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
        "-json",
        "-interval",
        "1h",
        "-seed",
        "3",
      ]);
      await eventually(() => server.arrivals.length >= 6, "six attempts");
      cli.signal("SIGINT");
      expect(await cli.exited).toBe(0);
      // min(10ms * 2^n): 20, 40, 80, 160, 320 ms after each 503.
      expectGapsNeverShorter(server.arrivals, [20, 40, 80, 160, 320]);
      const { summary } = windowsAndSummary(cli.stdoutLines);
      expect(summary.attempts).toBeGreaterThanOrEqual(6);
      expect(summary.retries).toBe(summary.attempts - 1);
    },
    jitterGaps: async () => {
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
        "-seed",
        String(seed),
      ]);
      await eventually(() => server.arrivals.length >= 7, "seven attempts");
      cli.signal("SIGINT");
      expect(await cli.exited).toBe(0);
      // Replay the same user (user 0, drawing from its own stream of the seed) through the pure model. Jittered
      // waits differ widely (20-400 ms), so a client that ignored the seed would show a gap shorter than its wait.
      const retry: RetryConfig = {
        backoff: decorrelatedJitterPolicy({ baseMs: 20, capMs: 400 }),
        thinkTimeMeanMs: 10,
        maxAttempts: Infinity,
      };
      const random = streamRandom(seed, 0);
      const state = initialUserState(retry);
      firstWait(retry, state, random);
      const expectedWaits = Array.from({ length: 6 }, () => afterAttempt(retry, state, "error", random).waitMs);
      expectGapsNeverShorter(server.arrivals, expectedWaits);
    },
    retryBudgetFlag: () => budgetRun(["-retry-budget"]),
    budgetGrpc: () => budgetRun(["-budget", "grpc"]),
    timeouts: async () => {
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
        "-json",
        "-interval",
        "1h",
      ]);
      // A client retries only after a timeout: twelve arrivals mean at least nine timeouts.
      await eventually(() => server.arrivals.length >= 12, "twelve attempts");
      // While it runs, every connection but the (at most three) current attempts' is closed by the client.
      await eventually(() => server.closedByClient() >= server.arrivals.length - 3, "timed-out connections closed");
      cli.signal("SIGINT");
      expect(await cli.exited).toBe(0);
      const { summary } = windowsAndSummary(cli.stdoutLines);
      expect(summary.ok).toBe(0);
      expect(summary.errors).toBe(0);
      expect(summary.timedout).toBeGreaterThanOrEqual(9);
      expect(summary.timedout).toBeGreaterThanOrEqual(summary.attempts - 3);
      // The rest were closed when it exited: none is left open.
      await eventually(() => server.closedByClient() === server.arrivals.length, "every connection closed");
    },
    refused: async () => {
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
      await eventually(
        () => clientReportLines(cli.stdoutLines).reduce((sum, window) => sum + window.errors, 0) >= 100,
        "100 errors reported in windows",
      );
      cli.signal("SIGINT");
      expect(await cli.exited).toBe(0);
      const { summary } = windowsAndSummary(cli.stdoutLines);
      expect(summary.errorKinds.refused).toBe(summary.errors);
      expect(summary.errors).toBeGreaterThanOrEqual(100);
      expect(cli.stderrLines.join("\n")).not.toMatch(/unhandled|uncaught|at .*\.ts:\d+/);
    },
    noDescriptor: async () => {
      const server = await startScriptedServer(() => {}); // holds every request: each needs its own socket
      const cli = spawnCli(
        "client",
        ["-url", server.url, "-clients", "150", "-lambda", "0.05", "-timeout", "1s", "-interval", "500ms", "-json"],
        { shell: "ulimit -n 64" },
      );
      const windows = () => clientReportLines(cli.stdoutLines);
      await eventually(
        () => windows().some((window) => (window.notSent ?? 0) > 0) && windows().some((window) => window.timedout > 0),
        "a window with attempts not sent and one with timeouts",
      );
      cli.signal("SIGINT");
      expect(await cli.exited).toBe(0);
      const { windows: printed, summary } = windowsAndSummary(cli.stdoutLines);
      expect(summary.notSent).toBeGreaterThan(0);
      expect(summary.errorKinds["no-file-descriptor"]).toBeUndefined();
      expect(summary.errors).toBe(0);
      expect(summary.timedout).toBeGreaterThan(0); // the sockets it did get were used
      for (const window of printed.filter((window) => (window.notSent ?? 0) > 0)) {
        expect(window).toMatchObject({ behind: true, behindReason: expect.stringContaining("could not be sent") as string });
        // The server holds every connection: the window says so beside the client's own shortage.
        expect(window.behindReason).toMatch(
          /could not be sent \(no file descriptor or local port\) while \d+ sent were waiting on the server \(/,
        );
      }
      expect(cli.stderrLines.join("\n")).toMatch(
        /WARNING: the client fell behind .* Remedy: raise the descriptor limit with ulimit -n \(now 64\)/,
      );
      expect(cli.stderrLines.join("\n")).not.toMatch(/uncaught|unhandled|\n\s+at /);
    },
  });

  it("prints -h with the reference flags and every strategy, and exits 0", () => runs("help"));

  it("counts every attempt against the real server in exactly one printed window", () => runs("counted"));

  it("prints the reference line every interval and a summary at the end", () => runs("referenceLines"));

  it("prints the same lines with worker threads: the reference line, then the summary; JSON with the same fields", () => runs("threads"));

  it("waits for -start-at, and stops cleanly when interrupted before it", () => runs("startAt"));

  it("retries on the wire as the policy says: exponential growth without jitter, every attempt after the first a retry", () =>
    runs("exponentialGaps"));

  it("retries on the wire in the seeded schedule of decorrelated jitter", () => runs("jitterGaps"));

  it.each([
    [["-retry-budget"], "retryBudgetFlag"],
    [["-budget", "grpc"], "budgetGrpc"],
  ] as const)("gives up when the gRPC retry budget (%j) refuses a retry, and counts it", (_flag, run) => runs(run));

  it("times out an unanswered request and closes its connection", () => runs("timeouts"));

  it("counts refused connections as errors, keeps going, and exits 0 with a summary on SIGINT", () => runs("refused"));

  it("holds attempts it cannot send for want of a file descriptor, never counts them as the server's errors, and marks the window", () =>
    runs("noDescriptor"));
});

import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.ts";
import { getJson } from "../helpers/raw-http.ts";
import { windowsAndSummary } from "../helpers/output-lines.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

interface Stats {
  admitted: number;
  served: number;
  cancelled: number;
}

describe("hedging on the wire (./client -hedge-delay)", () => {
  it("sends a hedge to a server slower than the delay, keeps one answer per request, and the server sees the copies cancelled", async () => {
    // Every request takes 400 ms in service, well past the 50 ms hedge delay: each request sends its two copies.
    const { server, url } = await spawnServer(["-baseDelay", "400ms", "-cancel-on-disconnect"]);
    try {
      const args = ["-url", url, "-clients", "5", "-lambda", "0.2", "-timeout", "5s", "-duration", "3s", "-json", "-seed", "7"];
      const cli = spawnCli("client", [...args, "-hedge-delay", "50ms", "-max-attempts", "2"]);
      expect(await cli.exited).toBe(0);
      expect(cli.stderrLines[0]).toMatch(/strategy hedging \(a copy every 50ms unless answered\), max attempts 2/);
      const { summary } = windowsAndSummary(cli.stdoutLines);
      const requests = summary.attempts - summary.retries;
      // The copies cancelled by the client are neither errors nor timeouts; a request counts one OK at most.
      expect(summary.ok).toBeGreaterThan(0);
      expect(summary.errors + summary.timedout + summary.gaveUp).toBe(0);
      expect(summary.ok).toBeLessThanOrEqual(requests);
      // Each request sent its hedge: those still open at the stop (at most one per client) may not have yet.
      expect(summary.retries).toBeLessThanOrEqual(requests);
      expect(summary.retries).toBeGreaterThanOrEqual(requests - 5);
      // The server received the hedges of the answered requests and saw them go away when their first copy answered.
      let stats: Stats | undefined;
      await eventually(async () => {
        stats = await getJson<Stats>(url.replace("/api", "/stats"));
        return stats.cancelled >= summary.ok;
      }, "the server counting a cancelled copy per answered request");
      expect(stats!.admitted).toBeGreaterThanOrEqual(2 * summary.ok);
      expect(stats!.served).toBeGreaterThanOrEqual(summary.ok);
    } finally {
      server.signal("SIGTERM");
      await server.exited;
    }
  });

  it("withholds the hedges once gRPC's retry budget is down to its threshold (A6): a failing server gets about one copy per request", async () => {
    // Every request is answered 500 at once: a non-fatal failure, so without a budget each request sends its 3 copies.
    const { server, url } = await spawnServer(["-error-rate", "1", "-baseDelay", "1ms"]);
    try {
      const args = ["-url", url, "-clients", "10", "-lambda", "0.1", "-timeout", "2s", "-duration", "500ms", "-json", "-seed", "7"];
      const budget = ["-budget", "grpc", "-instances", "1"];
      // A delay past the run's end: every hedge is one sent at once after a failure, when that failure has been counted.
      const cli = spawnCli("client", [...args, "-hedge-delay", "1s", "-max-attempts", "3", ...budget]);
      expect(await cli.exited).toBe(0);
      const { summary } = windowsAndSummary(cli.stdoutLines);
      const requests = summary.attempts - summary.retries;
      expect(requests).toBeGreaterThanOrEqual(20);
      // 10 tokens, each failed copy costs one, hedges only above 5: at most 5 hedges in the whole run, not 2 per request.
      expect(summary.retries).toBeGreaterThan(0);
      expect(summary.retries).toBeLessThanOrEqual(5);
      expect(summary.ok).toBe(0);
      const stats = await getJson<Stats>(url.replace("/api", "/stats"));
      expect(stats.admitted).toBe(summary.attempts);
    } finally {
      server.signal("SIGTERM");
      await server.exited;
    }
  });

  it("refuses -hedge-delay with a backoff strategy or without -max-attempts, in one line", async () => {
    for (const [args, message] of [
      [["-strategy", "full-jitter"], /-hedge-delay replaces retry backoff .* -strategy full-jitter/],
      [["-simple-backoff-delay", "1s", "-max-attempts", "3"], /-simple-backoff-delay would not be used/],
      [[], /-hedge-delay needs -max-attempts 2 or more/],
    ] as const) {
      const cli = spawnCli("client", ["-hedge-delay", "50ms", ...args]);
      expect(await cli.exited).toBe(2);
      expect(cli.stderrLines.join("\n")).toMatch(message);
    }
  });
});

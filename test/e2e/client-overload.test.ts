import { describe, expect, it } from "vitest";
import { type ClientReportLine, clientReportLines } from "../helpers/output-lines.ts";
import { runTogether } from "../helpers/run-together.ts";
import { spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

/*
 * A herd far beyond what one thread can send on any machine (100 000 users at -lambda 1:
 * about 90 000 requests a second planned) against a server that cannot collapse. The client
 * must say that it fell behind, in the window and on stderr, never print a failure of the
 * server's without that mark, and still end when told.
 */

const OVERLOAD = ["-clients", "100000", "-lambda", "1", "-workers", "1", "-json", "-interval", "1s", "-seed", "3"];

function expectNoUnmarkedFailure(windows: readonly ClientReportLine[]): void {
  // The invariant: no window shows the server failing without also saying that the client fell behind.
  for (const window of windows) if (window.errors + window.timedout > 0) expect(window.behind).toBe(true);
  for (const window of windows) expect(window.errorKinds["no-file-descriptor"] ?? 0).toBe(0);
}

describe("./client overloaded on purpose", () => {
  // Two overloaded clients side by side: each only needs to fall behind, which sharing the cores makes surer.
  const runs = runTogether(
    {
      untilDuration: async () => {
        const { url } = await spawnServer(["-limit", "10000000", "-report-interval", "1h"]);
        const cli = spawnCli("client", ["-url", url, ...OVERLOAD, "-duration", "3s"]);
        const code = await cli.exited;
        return { code, stdoutLines: cli.stdoutLines, stderrLines: cli.stderrLines };
      },
      untilSigterm: async () => {
        const { url } = await spawnServer(["-limit", "10000000", "-report-interval", "1h"]);
        const cli = spawnCli("client", ["-url", url, ...OVERLOAD]);
        await cli.waitForLine(/^client: WARNING: the client fell behind/, { stream: "stderr", timeoutMs: 90_000 });
        cli.signal("SIGTERM");
        const code = await cli.exited;
        return { code, stdoutLines: cli.stdoutLines };
      },
    },
    { timeoutMs: 120_000 },
  );

  it("marks its windows, warns with the figure and the remedy, and ends at -duration with its summary", () => {
    const cli = runs("untilDuration");
    expect(cli.code).toBe(0);
    const lines = clientReportLines(cli.stdoutLines);
    const summary = lines.at(-1)!;
    expect(summary).toMatchObject({ summary: true, reason: "duration", behind: true });
    const windows = lines.slice(0, -1);
    const marked = windows.filter((window) => window.behind === true);
    expect(marked.length).toBeGreaterThan(0);
    expect(summary.behindWindows).toBe(marked.length);
    for (const window of marked)
      expect(window.behindReason).toMatch(/lateness p99 \d+ ms|event-loop delay p50|could not be sent|did not answer/);
    expectNoUnmarkedFailure(windows);
    const warnings = cli.stderrLines.filter((line) => line.startsWith("client: WARNING: the client fell behind"));
    expect(warnings).toHaveLength(marked.length);
    expect(warnings[0]).toMatch(/This window measures the client's own lag, not the server\. Remedy: .*(-workers \d+|-shard i\/n)/);
  });

  it("ends on SIGTERM with its summary while overloaded", () => {
    const cli = runs("untilSigterm");
    expect(cli.code).toBe(0);
    const lines = clientReportLines(cli.stdoutLines);
    expect(lines.at(-1)).toMatchObject({ summary: true, reason: "SIGTERM", behind: true });
    expectNoUnmarkedFailure(lines.slice(0, -1));
  });
});

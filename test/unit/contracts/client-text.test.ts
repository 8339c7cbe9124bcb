import { describe, expect, it } from "vitest";
import { formatClientLine, formatClientSummary } from "../../../src/contracts/client-text.ts";
import { clientReport } from "../../../src/contracts/client-line-writer.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";

describe("the client's text lines", () => {
  it("never prints a percentile above the maximum", () => {
    const stats = new WindowStats(0);
    for (let index = 0; index < 100; index++) {
      stats.attemptStarted(false);
      stats.attemptEnded({ outcome: "ok" }, 100);
    }
    const window = stats.closeWindow(5_000);
    expect(formatClientLine(window, 3)).toBe(
      "OK: 20.00 req/sec, errors: 0.00 req/sec, timedout: 0.00 req/sec, gave up: 0.00 req/sec, in flight: 3, p50: 100ms, p99: 100ms, " +
        "throttled: 0.00 req/sec, rejected: 0.00 req/sec, retries: 0.0% of attempts",
    );
    expect(formatClientSummary(stats.totals(5_000))).toMatch(/, OK latency p50 100ms p99 100ms max 100ms$/);
    expect(clientReport(window, 3, 5_000).latencyMs).toEqual({ p50: 100, p99: 100, max: 100 });
  });
});

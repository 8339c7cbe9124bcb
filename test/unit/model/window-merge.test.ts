import { describe, expect, it } from "vitest";
import { decodeLatencyHistogram, encodeLatencyHistogram } from "../../../src/model/latency-histogram.ts";
import { addCounts, mergeWindowReports } from "../../../src/model/window-merge.ts";
import { WindowStats } from "../../../src/model/window-stats.ts";
import { seededRandom } from "../../../src/backoff/random.ts";

/** Feeds `stats` OK answers with the given latencies and some failures. */
function record(stats: WindowStats, latenciesMs: readonly number[], failures: number) {
  for (const latency of latenciesMs) {
    stats.attemptStarted(false);
    stats.attemptEnded({ outcome: "ok" }, latency);
  }
  for (let index = 0; index < failures; index++) {
    stats.attemptStarted(true);
    stats.attemptEnded({ outcome: "error", errorKind: index % 2 === 0 ? "refused" : "http-5xx" }, 1);
  }
}

describe("merging windows", () => {
  it("adds counts kind by kind", () => {
    expect(
      addCounts([
        {
          ok: 1,
          errors: 2,
          timedout: 3,
          gaveUp: 4,
          attempts: 10,
          retries: 5,
          throttled: 7,
          rejected: 1,
          notSent: 2,
          errorKinds: { refused: 2 },
        },
        {
          ok: 10,
          errors: 1,
          timedout: 0,
          gaveUp: 0,
          attempts: 11,
          retries: 1,
          throttled: 2,
          rejected: 8,
          notSent: 0,
          errorKinds: { refused: 1, "http-5xx": 0 },
        },
      ]),
    ).toEqual({
      ok: 11,
      errors: 3,
      timedout: 3,
      gaveUp: 4,
      attempts: 21,
      retries: 6,
      throttled: 9,
      rejected: 9,
      notSent: 2,
      errorKinds: { refused: 3, "http-5xx": 0 },
    });
  });

  it("merges histograms, not percentiles: the merge equals one herd that saw every answer", () => {
    const random = seededRandom(5);
    // Two shares with very different latencies: averaging their p99s would be far off.
    const fast = Array.from({ length: 900 }, () => 1 + random.uniform() * 9);
    const slow = Array.from({ length: 100 }, () => 500 + random.uniform() * 1500);
    const [a, b, all] = [new WindowStats(0), new WindowStats(0), new WindowStats(0)];
    record(a!, fast, 3);
    record(b!, slow, 4);
    record(all!, [...fast, ...slow], 0);
    record(all!, [], 3);
    record(all!, [], 4);
    const merged = mergeWindowReports([a!.closeWindow(1_000), b!.closeWindow(1_000)]);
    const whole = all!.closeWindow(1_000);
    expect(merged.counts).toEqual({ ...whole.counts, errorKinds: { refused: 4, "http-5xx": 3 } });
    expect(merged.latency).toEqual(whole.latency);
    expect(merged.latency!.p99Ms).toBeGreaterThan(1_000);
    expect(merged.histogram!.totalCount).toBe(1_000);
  });

  it("spans its parts unless told otherwise, and has no latency without OK answers", () => {
    const a = new WindowStats(0);
    const b = new WindowStats(0);
    record(a, [], 2);
    const merged = mergeWindowReports([a.closeWindow(990), b.closeWindow(1_010)]);
    expect(merged).toMatchObject({ startMs: 0, endMs: 1_010, latency: undefined, histogram: undefined });
    expect(mergeWindowReports([a.closeWindow(2_000)], { startMs: 5, endMs: 9 })).toMatchObject({ startMs: 5, endMs: 9 });
  });

  it("carries a histogram through HdrHistogram's compressed base64 unchanged", () => {
    const stats = new WindowStats(0);
    record(stats, [0.5, 1, 100, 100.25, 2_000, 59_000], 0);
    const report = stats.closeWindow(1_000);
    const encoded = encodeLatencyHistogram(report.histogram!);
    expect(encoded).toMatch(/^HISTFAA/);
    const decoded = decodeLatencyHistogram(encoded);
    expect(decoded.totalCount).toBe(6);
    for (const percentile of [1, 50, 90, 99, 100]) {
      expect(decoded.getValueAtPercentile(percentile)).toBe(report.histogram!.getValueAtPercentile(percentile));
    }
    expect(() => decodeLatencyHistogram("not a histogram")).toThrow();
  });
});

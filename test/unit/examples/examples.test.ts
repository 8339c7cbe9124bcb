import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChainReport } from "../../../src/runner/chain-report.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { capturedIo } from "../../helpers/captured-io.ts";
import { EXAMPLES_DIR, loadExample, runExample, runOccExample, type StrategyOutcome } from "../../helpers/examples.ts";
import { amplificationDuring, degradedShare, firstHealthySecond } from "../../validate/examples-catalog.ts";

/*
 * Each example of examples/, scaled down where it is long, for its qualitative outcome only:
 * which strategy recovers and which collapses, and the order of the loads. `npm run validate`
 * runs them at full size against the published figures (test/validate/examples.test.ts).
 */

const load = (outcome: StrategyOutcome) => outcome.counts.attempts / outcome.requests;

/** An example with a chain of tiers, run by ./sim with -json and the flags given beside the file: its tiers by name. */
async function runChainExample(
  file: string,
  flags: readonly string[],
): Promise<{ tiers: Map<string, ChainReport["tiers"][number]>; windows: ChainReport["windows"] }> {
  const { io, stdout } = capturedIo();
  expect(await simMain([join(EXAMPLES_DIR, file), "-json", ...flags], io)).toBe(0);
  const report = JSON.parse(stdout()) as ChainReport;
  return { tiers: new Map(report.tiers.map((tier) => [tier.name, tier])), windows: report.windows };
}
const only = (outcomes: StrategyOutcome[]) => outcomes[0]!;

describe("examples", () => {
  it("each names its source and published outcome, and the simulator takes its flags", async () => {
    const files = readdirSync(EXAMPLES_DIR).filter((file) => file.endsWith(".yaml"));
    expect(files.length).toBeGreaterThanOrEqual(11);
    for (const file of files) {
      const example = await loadExample(file);
      expect(example.source.url, file).toMatch(/^https:\/\//);
      expect(example.published.length, file).toBeGreaterThan(20);
    }
  });

  it("the article: fixed retry collapses after the stop, the reference backoff recovers", async () => {
    const [fixed, backoff] = await runExample("01-article-fixed-vs-backoff.yaml");
    expect([fixed!.metrics.verdict, backoff!.metrics.verdict]).toEqual(["collapsed", "recovered"]);
  });

  it("the AWS backoff blog at 30 clients: no backoff does the most work; exponential without jitter more work and far longer than full jitter", async () => {
    const figures = await runOccExample("02-aws-backoff-jitter.yaml", { clients: "30", trials: "10" });
    const at = (strategy: string) => figures.find((figure) => figure.strategy === strategy)!;
    expect(figures.map((figure) => [figure.strategy, figure.clients, figure.landed])).toEqual(
      ["none", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"].map((strategy) => [strategy, 30, 30]),
    );
    for (const other of figures.filter((figure) => figure.strategy !== "none")) expect(at("none").writes).toBeGreaterThan(other.writes);
    expect(at("exponential").writes).toBeGreaterThan(1.3 * at("full-jitter").writes);
    expect(at("exponential").completionMs).toBeGreaterThan(5 * at("full-jitter").completionMs);
    expect(at("equal-jitter").completionMs).toBeGreaterThan(at("full-jitter").completionMs);
  });

  it("Brooker's retries at 50 % failures: three retries load most, the token bucket little, the breaker least", async () => {
    const run = async (flags: Record<string, string>) =>
      only(await runExample("03-brooker-token-bucket.yaml", { "error-rate": "0.5", ...flags }));
    const three = await run({ "max-attempts": "4" });
    const bucket = await run({ "max-attempts": "0", budget: "brooker" });
    const breaker = await run({ breaker: "brooker-retry" });
    expect(load(three)).toBeGreaterThan(1.8);
    expect(load(bucket)).toBeGreaterThan(1.05);
    expect(load(bucket)).toBeLessThan(1.2);
    expect(load(breaker)).toBeLessThan(1.02);
  });

  it("Brooker's collapse: no backoff stays down after the spike, backoff with jitter recovers", async () => {
    const [fixed, jitter] = await runExample("04-brooker-collapse.yaml");
    expect([fixed!.metrics.verdict, jitter!.metrics.verdict]).toEqual(["collapsed", "recovered"]);
  });

  it("open and closed: the open system's p99 is several times the closed one's", async () => {
    const closed = only(await runExample("05-brooker-open-closed.yaml", { duration: "10m" }));
    const open = only(
      await runExample("05-brooker-open-closed.yaml", { duration: "10m", arrivals: "open", rate: "8", clients: null, lambda: null }),
    );
    expect(open.latency!.p99Ms / closed.latency!.p99Ms).toBeGreaterThan(3.5);
  });

  it("a capacity cut: metastable after 10 s, recovered after 9 s", async () => {
    const ten = only(await runExample("06-metastable-capacity-cut.yaml", { duration: "100s" }));
    const nine = only(await runExample("06-metastable-capacity-cut.yaml", { duration: "100s", faults: "capacity@30s+9s*0.4" }));
    expect([ten.metrics.verdict, nine.metrics.verdict]).toEqual(["collapsed", "recovered"]);
  });

  it("Good Retry, Bad Retry: during a full outage retry-2x multiplies the load, the budget and the breaker do not", async () => {
    const during = async (flags: Record<string, string>) =>
      amplificationDuring(only(await runExample("07-yandex-good-retry-bad-retry.yaml", { duration: "6s", ...flags })));
    expect(await during({})).toBeGreaterThan(2);
    expect(await during({ budget: "yandex" })).toBeLessThan(1.2);
    expect(await during({ breaker: "yandex-retry" })).toBeLessThan(1.1);
  });

  it("Stability Sim's retry storm: fixed-3 retries stay down after the crash, no retries recover", async () => {
    const retries = only(await runExample("08-stability-sim-retry-storm.yaml", { duration: "30s" }));
    const none = only(await runExample("08-stability-sim-retry-storm.yaml", { duration: "30s", "max-attempts": "1" }));
    expect(retries.metrics.verdict).toBe("collapsed");
    expect(none.metrics.verdict).not.toBe("collapsed");
  });

  it("Stability Sim's timeout cascade: at full utilisation some windows time requests out and some do not", async () => {
    const outcome = only(await runExample("09-stability-sim-timeout-cascade.yaml", { duration: "2m" }));
    const degraded = degradedShare(outcome);
    expect(degraded).toBeGreaterThan(0.05);
    expect(degraded).toBeLessThan(0.95);
  });
  it("Stability Sim's GC death spiral: after the burst nothing is answered in time, with retries or without", async () => {
    const okAfter = (outcome: StrategyOutcome, fromMs: number) =>
      outcome.windows.filter((window) => window.startMs >= fromMs).reduce((sum, window) => sum + window.okPerSec, 0);
    const retries = only(await runExample("10-stability-sim-gc-death-spiral.yaml", { duration: "20s" }));
    const none = only(await runExample("10-stability-sim-gc-death-spiral.yaml", { duration: "20s", "max-attempts": "1" }));
    expect(retries.counts.attempts).toBeGreaterThan(retries.requests);
    expect([okAfter(retries, 12_000), okAfter(none, 12_000)]).toEqual([0, 0]);
  });

  it("three tiers, the api hedging: a few per cent more database load while it answers, every copy sent while it is down", async () => {
    // 300 users instead of 1000; the database crashes at 20 s for 30 s: its first 15 s are before the crash, and the run lasts
    // to the crash's end (a chain refuses a run that ends during a fault).
    const { tiers: crash, windows } = await runChainExample("three-tiers-hedging.yaml", ["-clients", "300", "-duration", "50s"]);
    const arrivalsBefore = (tier: number) =>
      windows.filter((window) => window.endMs <= 15_000).reduce((sum, window) => sum + window.tiers[tier]!.arrivalsPerSec, 0);
    const [api, db] = [arrivalsBefore(1), arrivalsBefore(2)];
    expect(db).toBeGreaterThanOrEqual(api);
    expect(db / api).toBeLessThan(1.05);
    // During the crash each database call sends its 3 copies: the api's attempts times 3.
    expect(crash.get("db")!.faultAmplification! / crash.get("api")!.faultAmplification!).toBeGreaterThan(2.5);
    expect(crash.get("db")!.verdict).toBe("collapsed");
  });

  it("Stability Sim's goodput collapse: after the slow spike the server works flat out for clients that have gone", async () => {
    const outcome = only(await runExample("11-stability-sim-goodput-collapse.yaml", { duration: "30s" }));
    const at = (atMs: number) => outcome.server.find((sample) => sample.atMs >= atMs)!;
    const after = outcome.windows.filter((window) => window.startMs >= 20_000);
    // From 20 s to 30 s: almost nothing answered in time, yet the threads stay busy on the backlog.
    expect(after.reduce((sum, window) => sum + window.okPerSec, 0) / after.length).toBeLessThan(10);
    expect(at(30_000).abandoned! - at(20_000).abandoned!).toBeGreaterThan(800);
    expect(at(16_000).queueLength).toBeGreaterThan(300);
    expect(firstHealthySecond(outcome)).toBeNull();
  });
});

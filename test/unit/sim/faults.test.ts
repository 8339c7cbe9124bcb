import { describe, expect, it } from "vitest";
import type { ServiceSnapshot } from "../../../src/model/service-queue.ts";
import { main, run } from "../../../src/sim/main.ts";
import { parseSimArgs, type SimFlagValues } from "../../../src/options/sim.ts";
import type { SimulationEvent } from "../../../src/runner/simulate.ts";

function values(args: readonly string[]): SimFlagValues {
  const parsed = parseSimArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return parsed.values;
}

/** 300 users at about 100 requests a second, 1 s windows and reports, 30 s; backoff, so that the server comes back. */
const BASE = ["-clients", "300", "-lambda", "3", "-timeout", "500ms", "-interval", "1s", "-duration", "30s", "-strategy", "exponential"];
/** The queue model at a quarter of its capacity: 8 threads × 20 ms serve 400 requests a second. */
const QUEUE = ["-model", "queue", "-threads", "8", "-service-time", "20ms"];

/** One run, with the server's reports as they came. */
function simulateWith(args: readonly string[]) {
  const reports: { atMs: number; snapshot: ServiceSnapshot }[] = [];
  const trial = run(values([...BASE, ...args]), "exponential", (event: SimulationEvent) => {
    if (event.kind === "server") reports.push({ atMs: event.atMs, snapshot: event.snapshot });
  });
  const windows = (fromMs: number, toMs: number) =>
    trial.result.client.filter((window) => window.startMs >= fromMs && window.endMs <= toMs);
  return { ...trial, reports, windows };
}

const sum = (numbers: readonly number[]) => numbers.reduce((total, value) => total + value, 0);

describe("fault schedules in the simulator", () => {
  it("runs a stop of -faults exactly as the -outage-at/-outage it stands for", () => {
    const scheduled = simulateWith(["-faults", "stop@6s+4s"]);
    const shorthand = simulateWith(["-outage-at", "6s", "-outage", "4s"]);
    expect(scheduled.result.server).toEqual(shorthand.result.server);
    expect(scheduled.result.client).toEqual(shorthand.result.client);
    expect(scheduled.strategyResult.phases).toEqual({ stopAtMs: 6000, resumeAtMs: 10_000, endMs: 30_000 });
    expect(() => simulateWith(["-faults", "stop@6s+4s", "-outage", "5s"])).toThrow("-faults replaces -outage-at and -outage");
  });

  it("crash: loses what was in the server, refuses connections while it is down, and starts empty", () => {
    const { result, reports, windows, strategyResult } = simulateWith(["-faults", "crash@6s+4s", "-baseDelay", "400ms"]);
    const before = reports.filter((report) => report.atMs <= 6000).at(-1)!;
    expect(before.snapshot.concurrency).toBeGreaterThan(0);
    expect(reports.some((report) => report.atMs > 6000 && report.atMs < 10_000)).toBe(false); // a dead server reports nothing
    const down = windows(7000, 10_000);
    expect(sum(down.map((window) => window.okPerSec))).toBe(0);
    expect(Math.min(...down.map((window) => window.errorsPerSec))).toBeGreaterThan(0); // refused at once, not timed out
    expect(sum(down.map((window) => window.timedoutPerSec))).toBe(0);
    expect(reports.find((report) => report.atMs >= 10_000)!.snapshot.concurrency).toBeLessThan(before.snapshot.concurrency);
    expect(sum(windows(15_000, 30_000).map((window) => window.okPerSec))).toBeGreaterThan(0);
    expect(strategyResult.phases).toMatchObject({ stopAtMs: 6000, resumeAtMs: 10_000 });
    expect(result.serverTotals.abandoned + result.serverTotals.served).toBeLessThan(result.serverTotals.admitted);
  });

  it("capacity: the queue model runs on threads × factor for the length of the fault", () => {
    const { reports } = simulateWith([...QUEUE, "-faults", "capacity@6s+4s*0.25"]);
    const threadsAt = (atMs: number) => reports.find((report) => report.atMs === atMs)!.snapshot.threads;
    expect(threadsAt(5000)).toBe(8);
    expect(threadsAt(7000)).toBe(2);
    expect(threadsAt(9000)).toBe(2);
    expect(threadsAt(11_000)).toBe(8);
    expect(Math.max(...reports.filter((report) => report.atMs <= 6000).map((report) => report.snapshot.threadsBusy!))).toBeLessThanOrEqual(
      8,
    );
    expect(
      Math.max(...reports.filter((report) => report.atMs > 6000 && report.atMs < 10_000).map((report) => report.snapshot.threadsBusy!)),
    ).toBeLessThanOrEqual(2);
  });

  it("capacity: the exponential model's limit × factor raises the delay at the same concurrency", () => {
    const { reports } = simulateWith(["-factor", "2", "-k", "1", "-faults", "capacity@6s+4s*0.1"]);
    const inFault = reports.filter((report) => report.atMs > 6000 && report.atMs <= 10_000);
    // About 10 in service, under the limit of 30 before the fault and above its 3 during it, where each doubles the delay.
    expect(Math.max(...inFault.map((report) => report.snapshot.lastDelayMs))).toBeGreaterThan(1000);
    expect(Math.max(...reports.filter((report) => report.atMs < 6000).map((report) => report.snapshot.lastDelayMs))).toBe(100);
  });

  it("slow: service times × factor for the length of the fault", () => {
    const { reports } = simulateWith([...QUEUE, "-faults", "slow@6s+4s*3"]);
    const delays = (fromMs: number, toMs: number) =>
      reports.filter((report) => report.atMs > fromMs && report.atMs <= toMs).map((report) => report.snapshot.lastDelayMs);
    expect(Math.max(...delays(0, 6000))).toBeLessThan(60);
    expect(Math.min(...delays(7000, 10_000))).toBeGreaterThanOrEqual(60);
    expect(Math.max(...delays(12_000, 30_000))).toBeLessThan(60);
  });

  it("errors: answers this share of the requests 500 for the length of the fault", () => {
    const { windows } = simulateWith(["-faults", "errors@6s+4s*1"]);
    expect(Math.min(...windows(1000, 6000).map((window) => window.okPerSec))).toBeGreaterThan(0);
    expect(sum(windows(1000, 6000).map((window) => window.errorsPerSec))).toBe(0);
    const during = windows(7000, 10_000);
    expect(sum(during.map((window) => window.okPerSec))).toBe(0);
    expect(Math.min(...during.map((window) => window.errorsPerSec))).toBeGreaterThan(0);
    expect(Math.min(...windows(20_000, 30_000).map((window) => window.okPerSec))).toBeGreaterThan(0);
  });

  it("spike: the clients' load × factor for the length of the fault", () => {
    const { windows } = simulateWith([...QUEUE, "-faults", "spike@10s+10s*3"]);
    const rate = (fromMs: number, toMs: number) =>
      sum(windows(fromMs, toMs).map((window) => window.attemptsPerSec)) / windows(fromMs, toMs).length;
    const before = rate(2000, 10_000);
    expect(rate(12_000, 20_000)).toBeGreaterThan(2.5 * before);
    expect(rate(12_000, 20_000)).toBeLessThan(3.5 * before);
    expect(rate(22_000, 30_000)).toBeLessThan(1.3 * before);
  });

  it("spike: open-loop arrivals come at the rate × factor", () => {
    const { windows } = simulateWith(["-arrivals", "open", "-rate", "100", "-faults", "spike@10s+10s*2"]);
    const rate = (fromMs: number, toMs: number) =>
      sum(windows(fromMs, toMs).map((window) => window.attemptsPerSec)) / windows(fromMs, toMs).length;
    expect(rate(11_000, 20_000)).toBeGreaterThan(1.6 * rate(2000, 10_000));
  });

  it("phases carry the whole schedule, stops included, so the verdict and the report name every fault", () => {
    const { strategyResult } = simulateWith([...QUEUE, "-faults", "stop@6s+2s, capacity@7s+4s*0.5"]);
    expect(strategyResult.phases).toEqual({
      stopAtMs: 6000,
      resumeAtMs: 11_000,
      endMs: 30_000,
      faults: [
        { kind: "stop", atMs: 6000, durationMs: 2000, factor: 1 },
        { kind: "capacity", atMs: 7000, durationMs: 4000, factor: 0.5 },
      ],
    });
    expect(strategyResult.metrics.why).toMatch(/^after stop@6s\+2s, capacity@7s\+4s\*0\.5 had all ended at 11s: /);
    expect(strategyResult.server.at(-1)).toMatchObject({ queueLength: expect.any(Number), threadsBusy: expect.any(Number) });
  });

  it("-find-critical-outage varies one fault's length: a schedule of one fault, not several", () => {
    expect(() => simulateWith(["-faults", "capacity@6s+4s*0.5", "-find-critical-outage"])).not.toThrow();
    expect(() => simulateWith(["-faults", "capacity@6s+4s*0.5, spike@12s+2s*2", "-find-critical-outage"])).toThrow(
      "-find-critical-outage varies the length of one fault: -faults lists 2",
    );
    // ./sim's own checks come after the run's: a schedule that cannot run at all is said first.
    expect(() => simulateWith(["-faults", "stop@1s+1s, stop@5s+1s", "-find-critical-outage", "-outage", "5s"])).toThrow(
      "-faults replaces -outage-at and -outage",
    );
    expect(() => simulateWith(["-faults", "db:stop@1s+1s, stop@5s+1s", "-find-critical-outage"])).toThrow(
      /names a tier, but there is no chain of tiers/,
    );
  });

  it("-find-critical-outage bisects the length of a capacity cut", { timeout: 120_000 }, async () => {
    let stdout = "";
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true }, env: {} };
    const args = [...BASE, ...QUEUE, "-strategy", "fixed", "-faults", "capacity@6s+4s*0.1", "-find-critical-outage", "-parallel", "1"];
    expect(await main(args, io as never)).toBe(0);
    expect(stdout).toContain(
      "longest capacity ×0.1 after which the server still recovers: back at or below its limit within 20s of its end:\n",
    );
    const found = /^ {2}fixed +([\d.]+)s \(collapses after ([\d.]+)s\)$/m.exec(stdout);
    expect(found).not.toBeNull();
    const [survives, collapses] = [Number(found![1]), Number(found![2])];
    expect(collapses).toBeGreaterThan(survives);
    // Either side of the boundary, a run of that length says the same.
    const verdictAt = (seconds: number) =>
      simulateWith([...QUEUE, "-strategy", "fixed", "-faults", `capacity@6s+${seconds}s*0.1`]).metrics.verdict;
    expect(["recovered", "recovering"]).toContain(verdictAt(survives));
    expect(verdictAt(collapses)).toBe("collapsed");
  });
});

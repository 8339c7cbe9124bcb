import { describe, expect, it } from "vitest";
import { SMALL_SIM_SCENARIO } from "../helpers/small-scenario.ts";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

async function sim(args: readonly string[], options: { command?: string; prefix?: readonly string[] } = {}) {
  const cli = spawnCli("sim", [...(options.prefix ?? []), ...args], options.command === undefined ? {} : { command: options.command });
  const code = await cli.exited;
  return { code, stdout: cli.stdoutLines.join("\n"), stderr: cli.stderrLines.join("\n") };
}

describe("./sim", () => {
  it("prints the real programs' formats in virtual time, byte-identical for the same flags and seed", async () => {
    // Independent runs, side by side (each on one thread).
    const [first, second, other] = await Promise.all([
      sim([...SMALL_SIM_SCENARIO, "-seed", "5"]),
      sim([...SMALL_SIM_SCENARIO, "-seed", "5"]),
      sim([...SMALL_SIM_SCENARIO, "-seed", "6"]),
    ]);
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(other.stdout).not.toBe(first.stdout);
    const lines = first.stdout.split("\n");
    expect(lines[0]).toMatch(/^Jan {2}1 00:00:01\.000: concurrency: +\d+, last delay: (0s|100ms)$/);
    expect(
      lines.filter((line) => /^Jan {2}1 00:00:\d\d\.\d{3}: concurrency: +\d+, last delay: \S+$/.test(line)).length,
    ).toBeGreaterThanOrEqual(19);
    expect(
      lines.filter((line) => /^OK: \d+\.\d\d req\/sec, errors: \d+\.\d\d req\/sec, timedout: \d+\.\d\d req\/sec/.test(line)),
    ).toHaveLength(12);
    expect(lines.some((line) => line.startsWith("summary: 24.0s"))).toBe(true);
    expect(first.stdout).toMatch(/^fixed +collapsed/m);
    // No report while the server is stopped (6 s to 10 s), one on resume.
    expect(lines.some((line) => line.startsWith("Jan  1 00:00:08.000"))).toBe(false);
    expect(lines.some((line) => line.startsWith("Jan  1 00:00:10.000: concurrency:    0"))).toBe(true);
    expect(first.stderr).toMatch(/the delay reaches the 500ms timeout at \d+ requests in service/);
    expect(first.stderr).toMatch(/attempts per second after 4s of outage: fixed \d+\.\d\/s/);
  });

  it("writes one JSON object per report with -json", async () => {
    const run = await sim([...SMALL_SIM_SCENARIO, "-duration", "40s", "-json", "-exponential-backoff"]);
    const objects = run.stdout.split("\n").map((line) => JSON.parse(line) as { source: string; metrics?: { verdict: string } });
    expect(new Set(objects.map((object) => object.source))).toEqual(new Set(["server", "client", "summary"]));
    expect(objects.at(-1)?.metrics?.verdict).toBe("recovered");
  });

  it("says recovering, not collapsed, when only the clients are still away; too-short when the run ends in the outage", async () => {
    const [backoff, short] = await Promise.all([
      sim(["-outage-at", "15s", "-outage", "20s", "-duration", "95s", "-seed", "7", "-exponential-backoff", "-quiet"]),
      sim(["-quiet", "-duration", "30s", "-clients", "100"]),
    ]);
    expect(backoff.code).toBe(0);
    expect(backoff.stdout).toMatch(/^exponential-backoff +recovering +[\d.]+ .* 3s +never +\d+ +[\d.]+\/s +[\d.]+x$/m);
    expect(backoff.stdout).toMatch(
      /^exponential-backoff: recovering: server back under its limit of 30 3\.0 s after resume; clients not back at 90 % OK by the end, 60\.0 s after resume$/m,
    );
    expect(short.stdout).toMatch(/^fixed +too-short +[\d.]+ +\S+ \(peak \S+\) +- +- +- +- +\d+ +- +-$/m);
    expect(short.stdout).toMatch(/^fixed: too-short: the run ended at 30\.0 s, before the resume at 35\.0 s: nothing to judge$/m);
    expect(short.stdout).toMatch(/OK latency p50 100ms p99 100ms max 100ms$/m); // never a percentile above the maximum
  });

  it("finishes a run whose server never comes back: it runs out of memory, as a real one would, and the run ends there", async () => {
    // ./sim -clients 1000000 -duration 10m -outage-at 60s -outage 20s -seed 1 once died
    // with "Invalid array length"; this is the same run with a hundredth of the clients.
    const [run, help] = await Promise.all([
      sim(["-clients", "10000", "-duration", "10m", "-outage-at", "60s", "-outage", "20s", "-seed", "1", "-quiet"]),
      sim(["-h"]),
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^sim: the server runs out of memory at 800000 requests in service \(-max-in-service\)/m);
    expect(run.stderr).toMatch(/^sim: fixed: the server ran out of memory at 4m\d.*s with 800000 requests in service/m);
    expect(run.stdout).toMatch(/^summary: 24\d\.\ds, /m);
    expect(run.stdout).toMatch(/^fixed +collapsed /m);
    expect(run.stdout).toMatch(
      /^fixed: collapsed: server ran out of memory with 800000 requests in service 1\d\d\.\d s after resume; a real server crashes there$/m,
    );
    expect(help.stdout).toContain("-max-in-service n");
    expect(help.stdout).toContain("(default: 800000)");
  });

  /** The critical outages of fixed retry and of backoff: fixed retry survives the shorter one. */
  const fixedSurvivesLess = (stdout: string) => {
    const fixed = /fixed +(.+)/.exec(stdout)?.[1] ?? "";
    const backoff = /exponential-backoff +(.+)/.exec(stdout)?.[1] ?? "";
    const seconds = (text: string) =>
      text.startsWith("none") ? 0 : Number(/^([\d.]+)s/.exec(text)?.[1] ?? /^(\d+)m/.exec(text)?.[1] ?? Number.NaN);
    expect(seconds(fixed)).toBeLessThan(seconds(backoff));
  };
  /** A sweep's CSV: a header, then one row per value and strategy, in order. */
  const sweepCsv = (stdout: string) => {
    const rows = stdout.split("\n");
    expect(rows[0]).toBe("clients,strategy,verdict,peak_concurrency,peak_delay_s,server_recovery_s,client_recovery_s");
    expect(rows.slice(1).map((row) => row.split(",").slice(0, 2).join(","))).toEqual([
      "100,fixed",
      "100,exponential-backoff",
      "600,fixed",
      "600,exponential-backoff",
    ]);
    expect(rows).toContainEqual(expect.stringMatching(/^600,fixed,collapsed,/));
  };
  const noMore = () => {};

  it.each([
    ["every strategy's report lines", ["-strategies", "fixed,exponential-backoff,full-jitter,grpc"], noMore],
    ["JSON lines", ["-strategies", "all", "-json", "-duration", "12s"], noMore],
    [
      "a sweep of a parameter across strategies as CSV",
      ["-sweep", "clients=100,600", "-strategies", "fixed,exponential-backoff"],
      sweepCsv,
    ],
    [
      "the critical outages found by bisection, fixed retry's the shorter",
      ["-find-critical-outage", "-strategies", "fixed,exponential-backoff,decorrelated-jitter"],
      fixedSurvivesLess,
    ],
  ] as const)("prints %s, byte-identical on worker threads and in one thread", async (_what, args, check) => {
    const [threads, sequential] = await Promise.all([
      sim([...SMALL_SIM_SCENARIO, ...args, "-parallel", "3"]),
      sim([...SMALL_SIM_SCENARIO, ...args, "-parallel", "1"]),
    ]);
    expect(threads.code, threads.stderr).toBe(0);
    expect(sequential.code).toBe(0);
    expect(threads.stdout.length).toBeGreaterThan(200);
    expect(threads.stdout).toBe(sequential.stdout);
    check(sequential.stdout);
  });

  it("runs its worker threads from the TypeScript sources too (tsx)", async () => {
    const args = [...SMALL_SIM_SCENARIO, "-strategies", "fixed,exponential-backoff", "-quiet"];
    const [fromSources, bundled] = await Promise.all([
      sim([...args, "-parallel", "2"], {
        command: process.execPath,
        prefix: ["--import", "./src/register-tsx.mjs", `${REPO_ROOT}/src/bin/sim.ts`],
      }),
      sim([...args, "-parallel", "1"]),
    ]);
    expect(fromSources.code, fromSources.stderr).toBe(0);
    expect(fromSources.stdout).toBe(bundled.stdout);
  });
});

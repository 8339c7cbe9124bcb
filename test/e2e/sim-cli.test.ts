import { describe, expect, it } from "vitest";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

const SMALL = [
  "-clients",
  "300",
  "-lambda",
  "3",
  "-timeout",
  "500ms",
  "-interval",
  "2s",
  "-outage-at",
  "6s",
  "-outage",
  "4s",
  "-duration",
  "24s",
];

async function sim(args: readonly string[], options: { command?: string; prefix?: readonly string[] } = {}) {
  const cli = spawnCli("sim", [...(options.prefix ?? []), ...args], options.command === undefined ? {} : { command: options.command });
  const code = await cli.exited;
  return { code, stdout: cli.stdoutLines.join("\n"), stderr: cli.stderrLines.join("\n") };
}

describe("./sim", () => {
  it("prints the real programs' formats in virtual time, byte-identical for the same flags and seed", async () => {
    const first = await sim([...SMALL, "-seed", "5"]);
    const second = await sim([...SMALL, "-seed", "5"]);
    const other = await sim([...SMALL, "-seed", "6"]);
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
    const run = await sim([...SMALL, "-duration", "40s", "-json", "-exponential-backoff"]);
    const objects = run.stdout.split("\n").map((line) => JSON.parse(line) as { source: string; metrics?: { verdict: string } });
    expect(new Set(objects.map((object) => object.source))).toEqual(new Set(["server", "client", "summary"]));
    expect(objects.at(-1)?.metrics?.verdict).toBe("recovered");
  });

  it("finds the critical outage by bisection: fixed retry survives less than backoff", async () => {
    const run = await sim([...SMALL, "-find-critical-outage", "-strategies", "fixed,exponential-backoff"]);
    expect(run.code).toBe(0);
    const fixed = /fixed +(.+)/.exec(run.stdout)?.[1] ?? "";
    const backoff = /exponential-backoff +(.+)/.exec(run.stdout)?.[1] ?? "";
    const seconds = (text: string) =>
      text.startsWith("none") ? 0 : Number(/^([\d.]+)s/.exec(text)?.[1] ?? /^(\d+)m/.exec(text)?.[1] ?? Number.NaN);
    expect(seconds(fixed)).toBeLessThan(seconds(backoff));
  });

  it("sweeps a parameter across strategies as CSV", async () => {
    const run = await sim([...SMALL, "-sweep", "clients=100,600", "-strategies", "fixed,exponential-backoff"]);
    expect(run.code).toBe(0);
    const rows = run.stdout.split("\n");
    expect(rows[0]).toBe("clients,strategy,verdict,peak_concurrency,peak_delay_s,server_recovery_s,client_recovery_s");
    expect(rows.slice(1).map((row) => row.split(",").slice(0, 2).join(","))).toEqual([
      "100,fixed",
      "100,exponential-backoff",
      "600,fixed",
      "600,exponential-backoff",
    ]);
    expect(rows).toContainEqual(expect.stringMatching(/^600,fixed,collapsed,/));
  });

  it.each([
    ["every strategy's report lines", ["-strategies", "fixed,exponential-backoff,full-jitter,grpc"]],
    ["JSON lines", ["-strategies", "all", "-json", "-duration", "12s"]],
    ["a sweep", ["-sweep", "outage=2s,4s,8s", "-strategies", "fixed,exponential-backoff"]],
    ["the critical outages", ["-find-critical-outage", "-strategies", "fixed,exponential-backoff,decorrelated-jitter"]],
  ])("prints %s byte-identical on worker threads and in one thread", async (_what, args) => {
    const threads = await sim([...SMALL, ...args, "-parallel", "3"]);
    const sequential = await sim([...SMALL, ...args, "-parallel", "1"]);
    expect(threads.code, threads.stderr).toBe(0);
    expect(sequential.code).toBe(0);
    expect(threads.stdout.length).toBeGreaterThan(200);
    expect(threads.stdout).toBe(sequential.stdout);
  });

  it("runs its worker threads from the TypeScript sources too (tsx)", async () => {
    const args = [...SMALL, "-strategies", "fixed,exponential-backoff", "-quiet"];
    const fromSources = await sim([...args, "-parallel", "2"], {
      command: process.execPath,
      prefix: ["--import", "./src/register-tsx.mjs", `${REPO_ROOT}/src/bin/sim.ts`],
    });
    expect(fromSources.code, fromSources.stderr).toBe(0);
    expect(fromSources.stdout).toBe((await sim([...args, "-parallel", "1"])).stdout);
  });

  it.each([
    [["-outage-at", "5s,10s", "-outage", "1s,2s,3s"], "sim: -outage lists 3 durations for 2 outages"],
    [
      ["-sweep", "color=red"],
      'sim: invalid value "color=red" for flag -sweep: cannot sweep color; one of outage, clients, lambda, timeout, backlog, limit, baseDelay, simple-backoff-delay',
    ],
    [["-sweep", "clients=0"], 'sim: invalid value "0" for flag -clients: must be >= 1'],
    [["-factor", "0.5"], 'sim: invalid value "0.5" for flag -factor: must be >= 1'],
    [["-parallel", "0"], 'sim: invalid value "0" for flag -parallel: must be >= 1'],
  ])("rejects %j with one line and exit 2", async (args, message) => {
    const run = await sim(args);
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toBe(message);
  });
});

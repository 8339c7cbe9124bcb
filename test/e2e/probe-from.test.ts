import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/duration.ts";
import { REPO_ROOT, spawnCli, spawnServer } from "../helpers/spawn-cli.ts";

/*
 * probe -from on the load tests a user already has, made here by the real tools against ./server
 * (4 threads × 50 ms: 80 req/s): Debian's wrk at six concurrencies, fitted; autocannon (a dev
 * dependency), read. A file of its own: the tools' runs would disturb the other probes' timings.
 */

const AUTOCANNON = resolve(REPO_ROOT, "node_modules/.bin/autocannon");
const QUEUE_MODEL = /^picked queue: model queue \((\d+) threads, .*service time (\S+), fifo/m;

async function finished(run: ReturnType<typeof spawnCli>) {
  const code = await run.exited;
  return { code, stdout: run.stdoutLines.join("\n"), stderr: run.stderrLines.join("\n") };
}

describe("probe -from: load tests a user already made", () => {
  // The tools' files serve every test here: removed after the last (a temporaryDir goes after the first).
  const dir = mkdtempSync(join(tmpdir(), "thundering-herd-probe-from-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const made = { wrk: [] as string[], autocannon: [] as string[] };
  let url = "";

  /** One run of a tool, its output kept in a file as the user would keep it. */
  async function tool(name: "wrk" | "autocannon", command: string, args: readonly string[]): Promise<void> {
    const run = spawnCli(name, args, { command });
    const { code, stdout, stderr } = await finished(run);
    expect(code, stderr).toBe(0);
    const file = join(dir, `${name}-${made[name].length + 1}.out`);
    writeFileSync(file, stdout);
    made[name].push(file);
  }

  beforeAll(async () => {
    url = (await spawnServer(["-model", "queue", "-threads", "4", "-service-time", "50ms"])).url;
    for (const users of ["1", "2", "3", "4", "6", "8"])
      await tool("wrk", "/usr/bin/wrk", ["-t", "1", "-c", users, "-d", "1s", "--latency", url]);
    for (const users of ["2", "8"]) await tool("autocannon", AUTOCANNON, ["-c", users, "-d", "1", "--json", url]);
  }, 60_000);

  it("fits wrk's runs to a queue of 4 ± 1 threads, its capacity within 10 % of 80 req/s, sending nothing", async () => {
    const run = await finished(spawnCli("probe", ["-from", made.wrk.join(","), "-out", join(dir, "service.yaml")]));
    const output = `${run.stderr}\n${run.stdout}`;
    expect(run.code, output).toBe(0);
    expect(output.match(/: wrk or wrk2 output \(with --latency\), 1 step$/gm), output).toHaveLength(6);
    const match = QUEUE_MODEL.exec(run.stdout);
    expect(match, output).not.toBeNull();
    // A second a run on a shared machine, not the probe's own steps: the capacity is what they pin down; a misread
    // unit or concurrency would be far off it.
    expect(Math.abs(Number(match![1]) - 4), output).toBeLessThanOrEqual(1);
    const capacity = Number(/model capacity ([\d.]+) req\/s/.exec(run.stdout)?.[1]);
    expect(Math.abs(capacity / 80 - 1), output).toBeLessThan(0.1);
    expect(parseDuration(/service time (\S+),/.exec(run.stdout)![1]!)).toBeGreaterThan(0);
  });

  it("reads autocannon's real --json: its connections as the concurrency, its answers per second", async () => {
    // Two runs are too few to fit (three at least): the probe says so, after reading each.
    const run = await finished(spawnCli("probe", ["-from", made.autocannon.join(",")]));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/2 steps in the files; fitting needs 3/);
    const steps = [...run.stdout.matchAll(/^concurrency +(\d+): +([\d.]+) req\/s, p50 ([\d.]+) ms/gm)].map((match) =>
      match.slice(1).map(Number),
    );
    expect(steps.map(([users]) => users)).toEqual([2, 8]);
    // At 2 users the queue is below its 4 threads: each answer takes its 50 ms, so 2 ÷ 0.05 s = 40 req/s, within 15 % (a
    // one-second run counts its start-up too; measured 37.6); a misread unit or duration would be off by far more.
    expect(Math.abs(steps[0]![1]! / 40 - 1), run.stdout).toBeLessThan(0.15);
    expect(steps[0]![2]!, run.stdout).toBeGreaterThanOrEqual(50);
  });

  it("refuses a file that is no load test in one line, naming it and the formats (exit 2)", async () => {
    const notes = join(dir, "notes.txt");
    writeFileSync(notes, "retry settings: 3 attempts\n");
    const run = await finished(spawnCli("probe", ["-from", notes]));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^\S+notes\.txt: not a load test the probe reads \(autocannon --json; /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../../src/choose/main.ts";
import { SYSTEM_FLAGS } from "../../../src/options/measure.ts";
import { rankingRule } from "../../../src/recommend/ranking.ts";
import { flagsInGroups } from "../../../src/cli/flags.ts";
import { SIM_FLAGS } from "../../../src/options/sim.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import type { ProgramIo } from "../../../src/runtime/program-io.ts";

/** A small system (200 users at ~95 req/s, a 400 ms timeout) and a small grid: seconds of work. */
const SMALL = [
  ...["-clients", "200", "-lambda", "2", "-timeout", "400ms", "-interval", "1s"],
  ...["-steady", "5s", "-observe", "15s", "-everyday", "20s", "-outages", "2s,6s", "-max-outage", "60s", "-seeds", "2"],
  ...["-candidates", "exponential-backoff,full-jitter:max-attempts=3", "-client-only", "-stability-seeds", "0"],
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function choose(args: readonly string[]) {
  const out = mkdtempSync(join(tmpdir(), "thundering-herd-choose-"));
  dirs.push(out);
  let stdout = "";
  let stderr = "";
  const io: ProgramIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  };
  const code = await main([...args, "-out", out], io);
  return { code, stdout, stderr, out };
}

/** The JSON result without the report's path (which carries the time). */
function result(stdout: string): Record<string, unknown> {
  const parsed = JSON.parse(stdout) as Record<string, unknown>;
  expect(parsed.report).toMatch(/choose-.+\/report\.html$/);
  delete parsed.report;
  return parsed;
}

describe("choose", () => {
  // Time limits bound a hung run (worker threads, a busy machine); they never measure speed.
  it(
    "gives the same result for the same seed, with one worker thread or two (-parallel), and another for another seed",
    { timeout: 180_000 },
    async () => {
      const one = await choose([...SMALL, "-json", "-parallel", "1"]);
      const two = await choose([...SMALL, "-json", "-parallel", "2"]);
      expect(one.code).toBe(0);
      expect(result(two.stdout)).toEqual(result(one.stdout));
      const other = await choose([...SMALL, "-json", "-parallel", "1", "-seed", "7"]);
      expect(result(other.stdout)).not.toEqual(result(one.stdout));

      const parsed = result(one.stdout) as {
        ranking: { id: string; rank: number }[];
        paretoFront: string[];
        recommendation: { id: string };
        snippets: { file: string }[];
      };
      expect(parsed.ranking.map((entry) => entry.id).sort()).toEqual([
        "exponential-backoff",
        "fixed",
        "full-jitter:max-attempts=3",
        "no-retries",
      ]);
      expect(parsed.recommendation.id).toBe(parsed.ranking[0]!.id);
      expect(parsed.paretoFront).toContain(parsed.recommendation.id);
      // Fixed retry collapses after a 6 s outage here (the demo's scaled-down scenario); it cannot rank first.
      expect(parsed.ranking[0]!.id).not.toBe("fixed");
      expect(parsed.snippets.map((snippet) => snippet.file)).toEqual([
        "grpc-service-config.json",
        "envoy.yaml",
        "aws-sdk.json",
        "aws-sdk.ts",
        "cockatiel.ts",
        "p-retry.ts",
        "thundering-herd.ts",
      ]);
    },
  );

  it(
    "prints the table, the rule, the recommendation and the runner-up, and writes a self-contained report",
    { timeout: 120_000 },
    async () => {
      const run = await choose([...SMALL, "-parallel", "1", "-stability-seeds", "1"]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^rank +candidate +within SLO +retried p50 +retried p99 +amplification +survives +2s outage +6s outage$/m);
      expect(run.stdout).toMatch(/^\d +fixed +[\d.]+ % \([\d.]+\) +\S+ +\S+ \(\S+\) +[\d.]+x \([\d.]+\) +\S+ .*collapsed$/m);
      expect(run.stdout).toContain(`Ranking rule: ${rankingRule([2_000, 6_000], 2_000)}`);
      // The first line of the answer: what to configure, the figures users feel, and how sure (three seeds: two, then one more).
      expect(run.stdout.split("\n")[0]).toMatch(
        /^Configure the clients: -strategy \S+.*Everyday [\d.]+ % of requests succeed within the SLO of 2s.* (of 3 seeds)/,
      );
      expect(run.stdout).toMatch(/^Runner-up, favouring /m);
      expect(run.stdout).toContain("--- gRPC service config (retryPolicy, retryThrottling) (grpc-service-config.json)");
      expect(run.stderr).toMatch(/choose: simulating: 8\/8 \(100 %\)/); // four candidates, two seeds: all within -screen-top
      expect(run.stderr).toMatch(/choose: stability seeds: 3\/3 \(100 %\)/);
      const dir = /^report: (.+)\/report\.html$/m.exec(run.stdout)![1]!;
      const html = readFileSync(join(dir, "report.html"), "utf8");
      expect(html).not.toMatch(/<script|<link|https?:\/\/(?!www\.w3\.org)/);
      expect(html.match(/<svg/g)?.length).toBe(3); // the Pareto chart, one timeline chart per outage
      expect(html).toContain("Success within the SLO against the longest outage survived");
      for (const file of [
        "pareto.svg",
        "summary.json",
        "grpc-service-config.json",
        "envoy.yaml",
        "aws-sdk.json",
        "cockatiel.ts",
        "p-retry.ts",
      ]) {
        expect(existsSync(join(dir, file)), file).toBe(true);
      }
    },
  );

  it(
    "runs the other seeds only for the candidates the answer names (the top, the baselines, the front …); the rest keep the first seed's figures",
    { timeout: 180_000 },
    async () => {
      const ids = "exponential-backoff,full-jitter:max-attempts=3,full-jitter,decorrelated-jitter,equal-jitter,grpc,table,google";
      const run = (...extra: string[]) => choose([...SMALL, "-candidates", ids, "-json", "-parallel", "1", ...extra]);
      interface Entry {
        id: string;
        rank: number;
        seeds: number;
        simulations: number;
        decidedBy: string;
      }
      const parsed = (stdout: string) => result(stdout) as { ranking: Entry[]; paretoFront: string[]; runnerUp: { id: string } | null };
      // A candidate's figures, without where it ranks and what decided that against its neighbour.
      const withoutRank = ({ rank: _rank, decidedBy: _decidedBy, ...entry }: Entry) => entry;
      // -screen-top 1 runs the stability count's top 3 all the same.
      const screened = await run("-screen-top", "1", "-stability-seeds", "1");
      expect(screened.code, screened.stderr).toBe(0);
      expect(screened.stderr).toMatch(/choose: simulating, first seed: 10\/10 \(100 %\)/);
      const every = parsed((await run("-screen-top", "0")).stdout).ranking;
      const firstSeed = parsed((await run("-seeds", "1")).stdout).ranking;
      const answer = parsed(screened.stdout);
      const full = new Set(answer.ranking.filter((entry) => entry.seeds === 2).map((entry) => entry.id));
      const named = [...answer.ranking.slice(0, 3).map((entry) => entry.id), "fixed", "no-retries", ...answer.paretoFront];
      for (const id of named) expect(full, id).toContain(id);
      if (answer.runnerUp !== null) expect(full).toContain(answer.runnerUp.id);
      // Some were screened out, or this test would say nothing.
      expect(full.size).toBeLessThan(answer.ranking.length);
      for (const entry of answer.ranking) {
        const same = (entry.seeds === 2 ? every : firstSeed).find((other) => other.id === entry.id)!;
        expect(withoutRank(entry), entry.id).toEqual(withoutRank(same));
      }
      const text = await choose([...SMALL, "-candidates", ids, "-parallel", "1", "-screen-top", "1"]);
      expect(text.stdout).toContain(
        `${answer.ranking.length - full.size} candidates ran the first seed alone (-screen-top): below the top 3 and named nowhere in the answer`,
      );
    },
  );

  it("lists its grid and what it costs without simulating", async () => {
    const run = await choose(["-list"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^no-retries +baseline +-strategy fixed -max-attempts 1$/m);
    expect(run.stdout).toMatch(/^fixed +baseline +-strategy fixed$/m);
    expect(run.stdout).toMatch(/^simulations: at most \d+ per candidate and seed/m);
    expect(run.stderr).toBe("");
  });

  it("rejects bad input with a usage error naming the flag, before simulating", async () => {
    await expect(choose(["-outages", "5s,0s"])).rejects.toThrow(UsageError);
    await expect(choose(["-outages", "5s,0s"])).rejects.toThrow(/-outages/);
    await expect(choose(["-candidates", "no-such-policy"])).rejects.toThrow(/-candidates: no such candidate/);
    await expect(choose(["-outages", "20m"])).rejects.toThrow(/-max-outage/);
    await expect(choose(["-clients", "0"])).rejects.toThrow(/-clients/);
    await expect(choose(["-slo", "3m"])).rejects.toThrow(/-slo: must be shorter than -everyday \(2m0s\)/);
    // A default SLO (5 x -timeout) leaves the everyday run at least twice its length.
    const short = await choose(["-everyday", "10s", "-list"]);
    expect(short.stdout).toMatch(/SLO 5s/);
    // One thread-count flag, as in ./sim; ./sim's strategy, run and output flags are not choose's.
    for (const flag of ["-workers", "-strategy", "-budget", "-outage", "-dashboard", "-speed"]) {
      await expect(choose([flag, "1"])).rejects.toThrow(`flag provided but not defined: ${flag}`);
    }
  });

  it("describes the system with ./sim's system and observation flags, with an everyday error rate of 1 %", () => {
    const names = SYSTEM_FLAGS.map((flag) => flag.name);
    expect(names).toEqual([
      ...flagsInGroups(SIM_FLAGS, ["system", "observation"])
        .map((flag) => flag.name)
        .filter((name) => name !== "error-rate"),
      "error-rate",
    ]);
    expect(names).toEqual(expect.arrayContaining(["clients", "arrivals", "instances", "limit", "backlog", "interval", "report-interval"]));
    expect(SYSTEM_FLAGS.find((flag) => flag.name === "error-rate")?.default).toBe(0.01);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ChainBase, type ChainCandidate, chainConfigFor, chainGrid } from "../../../src/recommend/chain-candidates.ts";
import { measureChain } from "../../../src/recommend/chain-measure.ts";
import {
  chainHeadline,
  chainQualification,
  chainRankingRule,
  type ChainSummary,
  rankChain,
  summarizeChain,
} from "../../../src/recommend/chain-ranking.ts";
import { rankingRule } from "../../../src/recommend/ranking.ts";
import type { TierVerdict } from "../../../src/model/tiers/tier-figures.ts";
import { chainTable } from "../../../src/recommend/chain-plan.ts";
import { main } from "../../../src/choose/main.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { parseDuration } from "../../../src/cli/duration.ts";
import { parseFaults } from "../../../src/model/faults/fault-schedule.ts";
import { parseScenario } from "../../../src/scenario-file/read.ts";
import { parseSimArgs, SIM_TARGET } from "../../../src/options/sim.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

/**
 * A small chain that every layer's retries kill: 20 user requests a second, open loop, through
 * an edge and an api (plenty of threads) to a database of 4 threads at 10 ms (400 a second).
 * Every layer makes 3 attempts; the database is ten times slower for 5 s. While it is, the
 * attempts time out and multiply up to 27 times at the database, more than it serves, so its
 * queue of work for nobody never drains; 9 times (retrying at the edge only) or a budget it can serve.
 */
const TINY = `scenario: 1
name: A small chain that every layer's retries kill
system: {arrivals: open, rate: 20, timeout: 1s}
strategy: {strategy: fixed, max-attempts: 3}
tiers:
  - name: edge
    system: {model: queue, threads: 1000, service-time: 1ms}
    upstream: {strategy: fixed, max-attempts: 3, timeout: 300ms}
  - name: api
    system: {model: queue, threads: 1000, service-time: 1ms}
    upstream: {strategy: fixed, max-attempts: 3, timeout: 100ms}
  - name: db
    system: {model: queue, threads: 4, service-time: 10ms}
faults: ["db:slow@5s+5s*10"]
run: {duration: 40s}
`;
const SCHEDULES = [parseFaults("db:slow@5s+5s*10", parseDuration)];

async function tinyBase(): Promise<ChainBase> {
  const scenario = await parseScenario(TINY, "tiny.yaml", SIM_TARGET);
  const parsed = parseSimArgs(scenario.tokens.filter((token) => !token.startsWith("-faults=")));
  if (parsed.kind !== "run") throw new Error("no help asked");
  return { values: parsed.values, tiers: scenario.tiers! };
}

const byId = (grid: readonly ChainCandidate[], id: string) => grid.find((candidate) => candidate.id === id)!;
const retrying = (candidate: ChainCandidate) => candidate.layers.filter((layer) => layer.retries).map((layer) => layer.name);

describe("choose's candidates for a chain", () => {
  it("places the retries: at the edge, next to the faulty tier, everywhere with a budget, everywhere", async () => {
    const skipped: string[] = [];
    const grid = chainGrid(await tinyBase(), SCHEDULES, skipped);
    expect(skipped).toEqual([]);
    expect(retrying(byId(grid, "edge/as-given"))).toEqual(["users", "edge"]);
    // The database is faulty: the api calls it.
    expect(retrying(byId(grid, "next-to-fault/as-given"))).toEqual(["api"]);
    expect(retrying(byId(grid, "every-layer/as-given"))).toEqual(["users", "edge", "api"]);
    expect(byId(grid, "edge/as-given").layers[2]!.settings).toEqual({ timeout: "100ms", "max-attempts": "1" });
    expect(byId(grid, "every-layer-budget/full-jitter:max-attempts=3").layers[1]!.settings).toEqual({
      timeout: "300ms",
      strategy: "full-jitter",
      "max-attempts": "3",
      budget: "grpc",
    });
    // The file's policy is fixed retry with 3 attempts everywhere: the grid's fixed:max-attempts=3 is the same chain, listed once.
    expect(grid.some((candidate) => candidate.policy === "fixed:max-attempts=3")).toBe(false);
    // The simulator's own rules build each chain: the api tries once, the users keep their timeout.
    const config = chainConfigFor(await tinyBase(), byId(grid, "edge/as-given"), SCHEDULES[0]);
    expect([config.retry.maxAttempts, ...config.tiers.slice(0, -1).map((tier) => tier.upstream!.retry.maxAttempts)]).toEqual([3, 3, 1]);
    expect(config.timeoutMs).toBe(1000);
    expect(config.tiers[2]!.faults).toEqual(SCHEDULES[0]);
  });
});

describe("choose's ranking for a chain", () => {
  it("ranks every layer's retries, which collapse the chain, after retrying at the edge only or with a budget, which recover", async () => {
    const base = await tinyBase();
    const grid = chainGrid(base, SCHEDULES, []);
    const ids = ["every-layer/as-given", "edge/as-given", "every-layer-budget/as-given", "next-to-fault/as-given"];
    const summaries = ids.map((id, candidateIndex) => {
      const candidate = byId(grid, id);
      const config = chainConfigFor(base, candidate, SCHEDULES[0]);
      return summarizeChain(candidate, [measureChain({ candidateIndex, scheduleIndex: 0, seed: 1, sloMs: 5000, config })]);
    });
    const ranked = rankChain(summaries).ranked;
    const verdicts = Object.fromEntries(ranked.map((summary) => [summary.candidate.id, summary.verdict]));
    expect(verdicts).toEqual({
      "every-layer/as-given": "collapsed",
      "edge/as-given": "recovered",
      "every-layer-budget/as-given": "recovered",
      "next-to-fault/as-given": "recovered",
    });
    expect(ranked.at(-1)!.candidate.id).toBe("every-layer/as-given");
    // Every layer multiplies its attempts at the database, as the policies allow at most; at the edge only, 3 x 3 at most.
    const plain = ranked.at(-1)!.tiers.at(-1)!;
    expect(plain.faultAmplification!).toBeGreaterThan(9);
    expect(plain.faultAmplification!).toBeLessThanOrEqual(27);
    const edge = summaries[1]!.tiers.at(-1)!;
    expect(edge.faultAmplification!).toBeLessThanOrEqual(9);
    expect(summaries[1]!.goodputPerSec).toBeGreaterThan(2 * ranked.at(-1)!.goodputPerSec);
    // The users' success within the SLO (5 s) is counted from their requests: the collapsed chain fails most of them.
    expect(summaries[1]!.sloSuccess).toBeGreaterThan(2 * ranked.at(-1)!.sloSuccess);

    // The table: a row per candidate, a column per tier for its attempts per user request during the faults.
    const table = chainTable(ranked).split("\n");
    expect(table[0]).toMatch(
      /^rank +candidate +verdict +within SLO +goodput\/s +succeeded +back +peak load +edge in faults +api in faults +db in faults$/,
    );
    expect(table.at(-1)).toMatch(
      new RegExp(
        `^4 +every-layer/as-given +collapsed .* never +[\\d.]+x db +[\\d.]+x +[\\d.]+x +${plain.faultAmplification!.toFixed(2)}x$`,
      ),
    );

    // With the edge only against every layer, the recommendation says who retries and who tries once.
    const two = rankChain([summaries[0]!, summaries[1]!]).ranked;
    expect(two.map((summary) => summary.candidate.id)).toEqual(["edge/as-given", "every-layer/as-given"]);
    const headline = chainHeadline(two, "db", 5000);
    expect(headline).toMatch(/^Retry at the edge only \(edge\/as-given\): users and edge retry each with its own policy from the file/);
    expect(headline).toContain("; api should try once (db, the bottom, calls nobody)");
    const nextToFault = chainHeadline(rankChain([summaries[3]!, summaries[0]!]).ranked, "db", 5000);
    expect(nextToFault).toMatch(
      /^Retry only next to the fault \(next-to-fault\/as-given\): api retries each with its own policy from the file \(api: -timeout 100ms -strategy fixed -max-attempts 3\); users and edge should try once/,
    );
  }, 60_000);
});

/**
 * Figures as choose measured them for examples/three-tiers.yaml (docs/three-tiers.json): every
 * layer retrying with decorrelated jitter gave 94.15 % of the users' requests within the SLO,
 * the database 23.87 attempts per user request while it was down; a budget at every layer 57.88 %
 * and 1.22. Both recovered at 35 s with the same goodput within noise (69.2 and 68.1 OK/s).
 */
function fixedSummary(
  candidate: ChainCandidate,
  figures: { sloSuccess: number; bottomAmplification: number; peakLoad: number; verdict?: TierVerdict },
): ChainSummary {
  const verdict = figures.verdict ?? "recovered";
  const tier = (name: string, faultAmplification: number) => ({
    name,
    verdict,
    faultAmplification,
    amplification: faultAmplification,
    peakLoad: figures.peakLoad,
    policyAmplification: null,
    workForNobody: 0,
  });
  return {
    candidate,
    runs: 3,
    verdict,
    verdicts: [verdict, verdict, verdict],
    goodputPerSec: 69,
    goodputSpread: 1.2,
    successRate: figures.sloSuccess,
    sloSuccess: figures.sloSuccess,
    sloSuccessSpread: 0.008,
    backAtMs: verdict === "collapsed" ? null : 35_000,
    peakLoad: figures.peakLoad,
    peakTier: "db",
    tiers: [tier("edge", 2.8), tier("api", 8.1), tier("db", figures.bottomAmplification)],
  };
}

describe("choose's rule for a chain is the single server's, users first", () => {
  it("ranks the users' success within the SLO before the bottom tier's amplification, and says what that costs", async () => {
    const grid = chainGrid(await tinyBase(), SCHEDULES, []);
    const everyLayer = fixedSummary(byId(grid, "every-layer/as-given"), { sloSuccess: 0.9415, bottomAmplification: 23.87, peakLoad: 3.58 });
    const budget = fixedSummary(byId(grid, "every-layer-budget/as-given"), {
      sloSuccess: 0.5788,
      bottomAmplification: 1.22,
      peakLoad: 1.5,
    });
    const result = rankChain([budget, everyLayer]);
    expect(result.ranked.map((summary) => summary.candidate.id)).toEqual(["every-layer/as-given", "every-layer-budget/as-given"]);
    expect(result.decidedBy).toEqual(["success within the SLO"]);
    expect(chainHeadline(result.ranked, "db", 15_000)).toContain(
      "94.15 % of the users' requests succeed within the SLO of 15s (69.0 OK/s), every tier back by 35s; db gets 23.87x attempts per user request during the faults",
    );
    expect(chainQualification(result.ranked)).toBe(
      "What the users' success costs the chain: db gets 23.87x attempts per user request during the faults, against 1.22x with " +
        "every-layer-budget/as-given (57.88 % within the SLO); peak load 3.58x at db against 1.50x at db; every tier back by 35s with both.",
    );
    // Level on the users' success within noise (the spread across runs), the bottom tier's amplification decides.
    const level = fixedSummary(byId(grid, "every-layer-budget/as-given"), { sloSuccess: 0.937, bottomAmplification: 1.22, peakLoad: 1.5 });
    expect(rankChain([everyLayer, level]).ranked[0]).toBe(level);
  });

  it("takes the spread from seed to seed within a fault schedule, never the gap between a mild and a long fault", async () => {
    const grid = chainGrid(await tinyBase(), SCHEDULES, []);
    // Two schedules × three seeds: A keeps 95 % under the mild fault and 75 % under the long one, B 80 % and 60 %;
    // seed to seed each moves by 0.4 points. Over all six runs the 20-point gap between the schedules would pass for noise.
    const runsOf = (shares: readonly (readonly number[])[], bottomAmplification: number) =>
      shares.flatMap((seeds, scheduleIndex) =>
        seeds.map((sloShare, seed) => ({
          candidateIndex: 0,
          scheduleIndex,
          seed,
          slo: { requests: 1000, withinSlo: Math.round(sloShare * 1000) },
          report: {
            users: { requests: 1000, ok: 950, gaveUp: 50, attempts: 1100 },
            durationMs: 30_000,
            tiers: [
              {
                name: "db",
                verdict: "recovered",
                recoveredAtMs: 20_000,
                faultAmplification: bottomAmplification,
                amplification: 1,
                peakLoad: 2,
                policyAmplification: 3,
                workForNobody: 0,
              },
            ],
          },
        })),
      ) as unknown as Parameters<typeof summarizeChain>[1];
    const summary = (id: string, [mild, long]: readonly [number, number], bottomAmplification: number) =>
      summarizeChain(
        byId(grid, id),
        runsOf(
          [mild, long].map((share) => [share, share + 0.002, share - 0.002]),
          bottomAmplification,
        ),
      );
    const a = summary("every-layer/as-given", [0.95, 0.75], 20);
    const b = summary("edge/as-given", [0.8, 0.6], 1.2);
    expect(a.sloSuccessSpread).toBeCloseTo(0.004, 6);
    const result = rankChain([b, a]);
    expect(result.ranked.map((summary) => summary.candidate.id)).toEqual(["every-layer/as-given", "edge/as-given"]);
    expect(result.decidedBy).toEqual(["success within the SLO"]);
  });

  it("ranks a chain whose tier stays down after every chain that came back, whatever its users' success", async () => {
    const grid = chainGrid(await tinyBase(), SCHEDULES, []);
    const melted = fixedSummary(byId(grid, "every-layer/as-given"), {
      sloSuccess: 0.9,
      bottomAmplification: 13,
      peakLoad: 14,
      verdict: "collapsed",
    });
    const edge = fixedSummary(byId(grid, "edge/as-given"), { sloSuccess: 0.6, bottomAmplification: 8, peakLoad: 9 });
    expect(rankChain([melted, edge]).ranked.map((summary) => summary.candidate.id)).toEqual(["edge/as-given", "every-layer/as-given"]);
  });

  it("states the rule as the single server states its own: what success means, and how it is compared within noise", () => {
    const single = rankingRule([30_000], 15_000);
    const chain = chainRankingRule(15_000);
    const userSentence = "A request succeeds for its user when it succeeds within the SLO, retries and waits included.";
    const noise = "for success, of the larger share of requests that miss the SLO, and at least 0.01 percentage point";
    for (const rule of [single, chain]) {
      expect(rule).toContain(userSentence);
      expect(rule).toContain(noise);
    }
    expect(chain).toContain("then by success within the SLO of 15s (higher first)");
  });
});

describe("choose FILE with tiers:", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function choose(args: readonly string[], text = TINY) {
    const dir = mkdtempSync(join(tmpdir(), "thundering-herd-choose-chain-"));
    dirs.push(dir);
    const file = join(dir, "tiny.yaml");
    writeFileSync(file, text);
    const captured = capturedIo();
    const code = await main([file, ...args, "-out", dir], captured.io);
    return { code, stdout: captured.stdout(), stderr: captured.stderr() };
  }

  it("lists the chain's candidates, those run by default marked", async () => {
    const { code, stdout } = await choose(["-list"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^\* edge\/as-given +users: -max-attempts 3; edge: -timeout 300ms -strategy fixed -max-attempts 3; api: -timeout 100ms -max-attempts 1$/m,
    );
    expect(stdout).toMatch(/^ {2}every-layer\/grpc:max-attempts=3 /m);
    expect(stdout).toContain("faults: db:slow@5s+5s*10");
  });

  it("says which of the file's keys a chain does not read: what ./sim runs (-strategies, -sweep, …), which is not a simulated run's", async () => {
    const run = 'run: {duration: 40s, strategies: fixed, sweep: "clients=1,2", find-critical-outage: true}';
    const { code, stderr } = await choose(["-list"], TINY.replace("run: {duration: 40s}", run));
    expect(code).toBe(0);
    expect(stderr).toMatch(/: ignoring run\.strategies, run\.find-critical-outage, run\.sweep: not for a chain$/m);
  });

  it("refuses what it cannot run for a chain with one line: a tier the chain lacks, -validate, no faults, an SLO as long as the run", async () => {
    await expect(choose(["-faults", "cache:crash@5s+5s"])).rejects.toThrow(
      /^-faults: the fault cache:crash names no tier of the chain \(edge, api, db\)$/,
    );
    await expect(choose(["-server-side"])).rejects.toThrow(UsageError);
    await expect(choose(["-server-side"])).rejects.toThrow(/^-server-side does not apply to a chain of tiers/);
    await expect(choose(["-faults", "db:crash@5s+50s"])).rejects.toThrow(/must go on after the faults db:crash@5s\+50s end/);
    // The SLO is measured over the requests that had all of it within the run (40 s here).
    await expect(choose(["-slo", "40s"])).rejects.toThrow(
      /^invalid value "40s" for flag -slo: must be shorter than the run \(run: duration, 40s\)/,
    );
    // ...and those requests must include the faults': an SLO that leaves the fault out measures nothing of it.
    await expect(choose(["-slo", "30s", "-faults", "db:slow@5s+10s*10"])).rejects.toThrow(
      /^invalid value "30s" for flag -slo: success within it counts the requests sent in the run's first 10s, which must hold the faults db:slow@5s\+10s\*10/,
    );
  });

  it("ranks them on its worker threads, the file's chain as it is always among them, as JSON", { timeout: 120_000 }, async () => {
    const { code, stdout } = await choose(["-candidates", "edge/as-given", "-seeds", "1", "-parallel", "1", "-json"]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as {
      ranking: { id: string; verdict: string; tiers: { name: string; faultAmplification: number }[] }[];
      recommendation: { id: string; retrying: string[]; once: string[] };
      snippets: { layer: string; id: string }[];
    };
    expect(result.ranking.map((entry) => [entry.id, entry.verdict])).toEqual([
      ["edge/as-given", "recovered"],
      ["every-layer/as-given", "collapsed"],
    ]);
    expect(result.ranking[0]!.tiers.map((tier) => tier.name)).toEqual(["edge", "api", "db"]);
    expect(result.recommendation).toMatchObject({ id: "edge/as-given", retrying: ["users", "edge"], once: ["api"] });
    expect([...new Set(result.snippets.map((snippet) => snippet.layer))]).toEqual(["users", "edge"]);
  });
});

describe("the docs quote the recorded chain (docs/three-tiers.json, scripts/three-tiers.ts)", () => {
  const ROOT = resolve(import.meta.dirname, "../../..");
  const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");
  interface Recorded {
    recommendation: { headline: string };
    ranking: (Omit<ChainSummary, "candidate" | "runs"> & { id: string })[];
  }
  const record = JSON.parse(read("docs/three-tiers.json")) as { choose: Recorded; chooseChecks: Recorded[] };

  it("has choose's answer and table in docs/tiers.md as the file records them", () => {
    const ranked = record.choose.ranking.map((entry): ChainSummary => ({
      ...entry,
      candidate: { id: entry.id } as ChainCandidate,
      runs: entry.verdicts.length,
    }));
    const block = `${record.choose.recommendation.headline}\n\n${chainTable(ranked)}`;
    expect(read("docs/tiers.md")).toContain(`\`\`\`\n${block}\n\`\`\``);
  });

  /** Every figure the file holds, as a page may write it: with one or two decimals, shares as percentages. */
  const written = new Set<string>();
  const collect = (value: unknown): void => {
    if (typeof value === "number") for (const figure of [value, value * 100]) written.add(figure.toFixed(1)).add(figure.toFixed(2));
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(collect);
  };
  collect(JSON.parse(read("docs/three-tiers.json")));

  it.each([
    ["docs/choose.md", "## A chain", "\n## "],
    ["docs/tiers.md", "<!-- tiers-choose: docs/three-tiers.json -->", "\nEvery tier's figures"],
    ["docs/tiers.md", "A crashed database refuses at once, so in this chain", "\nWhere the placement decides"],
  ])("%s: every decimal figure about the chain's choice is one the file records", (file, start, end) => {
    const text = read(file);
    const from = text.indexOf(start);
    const section = text.slice(from, text.indexOf(end, from + start.length));
    const figures = [...section.matchAll(/(?<![\w.-])\d+\.\d+(?![\w.])/g)].map((match) => match[0]);
    expect(figures.length).toBeGreaterThan(5);
    expect(figures.filter((figure) => !written.has(figure))).toEqual([]);
  });
});

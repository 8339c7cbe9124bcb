import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compareFigures, EXACT, formatMoved, provenanceProblems, type ComparisonRules } from "../../../harness/results-compare.ts";
import { REAL_RUN_TOLERANCE, RESULTS_FILES } from "../../../harness/results-files.ts";

/*
 * The comparison `npm run validate` makes between a regenerated results file and the committed
 * one (scripts/validate.ts): what fails, what is never compared, what a tolerance lets through.
 */

const ROOT = resolve(import.meta.dirname, "../../..");
const exact: ComparisonRules = { otherwise: EXACT };
const FIVE_PER_CENT: ComparisonRules = { otherwise: { kind: "relative", relative: 0.05 } };
const summary = (peak: number, verdict = "collapsed") => ({
  provenance: { commit: "a".repeat(40), date: "2026-11-23T16:26:33.352Z", machine: "2 x AMD EPYC" },
  results: [{ strategy: "fixed", metrics: { verdict, peakConcurrencyAfterResume: peak } }],
});

describe("compareFigures", () => {
  it("names a figure that moved beyond its tolerance: its path, old, new and tolerance", () => {
    const moved = compareFigures(summary(46359), summary(46360), exact);
    expect(moved).toEqual([{ path: "results[0].metrics.peakConcurrencyAfterResume", old: 46359, new: 46360, tolerance: "exact" }]);
    expect(formatMoved("docs/sim-all-summary.json", moved)).toBe(
      "docs/sim-all-summary.json: results[0].metrics.peakConcurrencyAfterResume: 46359 → 46360 (tolerance exact)",
    );
  });

  it("never compares how a file was recorded: commit, date, machine, wall time, load", () => {
    const old = { ...summary(100), recorded: { commit: "b", wallS: 95.4, loadAverage1m: { start: 5 } } };
    const now = { ...summary(100), provenance: { commit: "c", date: "2026-11-28T00:00:00Z" }, recorded: { commit: "d", wallS: 470 } };
    expect(compareFigures(old, now, exact)).toEqual([]);
  });

  it("lets a number move within its tolerance, and not a step further", () => {
    expect(compareFigures(summary(100), summary(105), FIVE_PER_CENT)).toEqual([]);
    expect(compareFigures(summary(100), summary(95), FIVE_PER_CENT)).toEqual([]);
    expect(compareFigures(summary(100), summary(105.1), FIVE_PER_CENT).map((figure) => figure.tolerance)).toEqual(["±5 %"]);
    const withFloor: ComparisonRules = { otherwise: { kind: "relative", relative: 0.05, absolute: 5 } };
    expect(compareFigures(summary(4), summary(9), withFloor)).toEqual([]);
    expect(compareFigures(summary(4), summary(10), withFloor)).toHaveLength(1);
  });

  it("holds words exactly under any tolerance: a verdict that flips fails", () => {
    const moved = compareFigures(summary(100, "collapsed"), summary(100, "recovered"), FIVE_PER_CENT);
    expect(moved.map((figure) => figure.path)).toEqual(["results[0].metrics.verdict"]);
  });

  it("fails on a figure only one side has: a key missing or added, an array longer or shorter", () => {
    const old = { a: 1, b: [1, 2] };
    expect(compareFigures(old, { a: 1, b: [1, 2], c: 3 }, exact)).toEqual([{ path: "c", old: undefined, new: 3, tolerance: "exact" }]);
    expect(compareFigures(old, { b: [1, 2] }, exact)).toEqual([{ path: "a", old: 1, new: undefined, tolerance: "exact" }]);
    expect(compareFigures(old, { a: 1, b: [1] }, exact)).toEqual([{ path: "b[1]", old: 2, new: undefined, tolerance: "exact" }]);
    expect(formatMoved("f.json", compareFigures(old, { b: [1, 2] }, exact))).toBe("f.json: a: 1 → (absent) (tolerance exact)");
  });

  it("holds each figure to the first rule whose pattern matches its path (* one part, ** any)", () => {
    const rules: ComparisonRules = {
      rules: [
        { pattern: "**.why", tolerance: { kind: "ignored", why: "words" } },
        { pattern: "results[*].peak", tolerance: { kind: "relative", relative: 0.5 } },
      ],
      otherwise: EXACT,
    };
    const old = { results: [{ peak: 10, why: "x", n: 1 }] };
    expect(compareFigures(old, { results: [{ peak: 14, why: "y", n: 1 }] }, rules)).toEqual([]);
    expect(compareFigures(old, { results: [{ peak: 10, why: "y", n: 2 }] }, rules).map((figure) => figure.path)).toEqual(["results[0].n"]);
  });
});

describe("the results files' registry (harness/results-files.ts)", () => {
  it("has one entry for every results file in docs/, and none for a file that is not there", () => {
    const files = readdirSync(resolve(ROOT, "docs"))
      .filter((name) => name.endsWith(".json"))
      .map((name) => `docs/${name}`);
    expect(RESULTS_FILES.map((entry) => entry.file).sort()).toEqual(files.sort());
  });

  const realSummary = RESULTS_FILES.find((entry) => entry.name === "demo-all-summary")!;
  const demoRun = (file: string, strategy: string) => {
    const { results } = JSON.parse(readFileSync(resolve(ROOT, file), "utf8")) as { results: { strategy: string }[] };
    return { results: [results.find((result) => result.strategy === strategy)] };
  };

  it("lets two real runs of the same strategy through: the spread its real tolerance comes from", () => {
    expect(REAL_RUN_TOLERANCE).toEqual({ kind: "relative", relative: 0.13 });
    for (const strategy of ["fixed", "exponential-backoff"]) {
      const before = demoRun("docs/demo-all-summary.json", strategy);
      const after = demoRun("docs/demo-presets-summary.json", strategy);
      expect(compareFigures(before, after, realSummary.rules)).toEqual([]);
    }
  });

  it("reruns a demo file with the seeds it records, and compares its flags without them", () => {
    const instances = RESULTS_FILES.find((entry) => entry.name === "demo-presets-instances-1-summary")!;
    const recorded = JSON.parse(readFileSync(resolve(ROOT, instances.file), "utf8")) as {
      settings: { seeds: { server: number; client: number }; clientArgs: string[] };
    };
    const step = instances.steps!("/scratch")[0]!();
    const { server, client } = recorded.settings.seeds;
    expect(step).toEqual(expect.arrayContaining(["-client-args", `-instances 1 -seed ${client}`, "-server-args", `-seed ${server}`]));
    const rerun = {
      ...recorded,
      settings: { ...recorded.settings, clientArgs: [...recorded.settings.clientArgs, "-seed", String(client)] },
    };
    expect(compareFigures(instances.normalize!(recorded), instances.normalize!(rerun), instances.rules)).toEqual([]);
    // The seeds themselves are held exactly: a rerun with others is not the recorded run.
    const other = { ...recorded, settings: { ...recorded.settings, seeds: { server, client: client + 1 } } };
    expect(
      compareFigures(instances.normalize!(recorded), instances.normalize!(other), instances.rules).map((figure) => figure.path),
    ).toEqual(["settings.seeds.client"]);
  });

  it("holds exponential-backoff's clients back to ±50 s (its row of the demo files), any other strategy's to one 5 s client window", () => {
    const presets = RESULTS_FILES.find((entry) => entry.name === "demo-presets-summary")!;
    const instances = RESULTS_FILES.find((entry) => entry.name === "demo-presets-instances-1-summary")!;
    const back = (rules: typeof presets.rules, row: number, old: number, now: number) =>
      compareFigures(
        { results: Array.from({ length: row + 1 }, (_, index) => ({ metrics: { clientRecoveryMs: index === row ? old : 0 } })) },
        { results: Array.from({ length: row + 1 }, (_, index) => ({ metrics: { clientRecoveryMs: index === row ? now : 0 } })) },
        rules,
      ).length;
    // exponential-backoff's 45.2 s and 65.1 s, both measured, pass; twice as late fails.
    expect(back(presets.rules, 1, 45_226, 65_088)).toBe(0);
    expect(back(presets.rules, 1, 45_226, 96_000)).toBe(1);
    // breaker's 5.3 s in demo-presets-instances-1 (its last row): a window later passes, two fail.
    expect(back(instances.rules, 5, 5_272, 10_272)).toBe(0);
    expect(back(instances.rules, 5, 5_272, 15_272)).toBe(1);
  });

  it("fails a real run whose outcome changed: backoff's recovery where fixed retry collapsed", () => {
    const fixed = demoRun("docs/demo-all-summary.json", "fixed");
    const backoff = demoRun("docs/demo-all-summary.json", "exponential-backoff");
    const { strategy: _, ...backoffFigures } = backoff.results[0] as { strategy: string };
    const moved = compareFigures(fixed, { results: [{ ...backoffFigures, strategy: "fixed" }] }, realSummary.rules);
    expect(moved.map((figure) => figure.path)).toEqual(
      expect.arrayContaining([
        "results[0].metrics.verdict",
        "results[0].metrics.peakConcurrencyAfterResume",
        "results[0].metrics.retryAmplification",
      ]),
    );
  });
});

describe("provenanceProblems: the check of a file validate does not regenerate", () => {
  const known = "a".repeat(40);
  const inHistory = (commit: string) => commit === known;
  it("accepts a commit of this branch's history with its date, at the top or in any provenance", () => {
    expect(provenanceProblems({ commit: known, date: "2026-11-23T16:42:43+00:00", rows: [] }, inHistory)).toEqual([]);
    expect(provenanceProblems({ provenance: { commit: `${known}+dirty`, date: "2026-11-23T18:51:11.789Z" } }, inHistory)).toEqual([]);
  });
  it("names a commit outside the history, a missing date, a file with no provenance", () => {
    const other = "b".repeat(40);
    expect(provenanceProblems({ run: { provenance: { commit: other, date: "2026-11-23" } } }, inHistory)).toEqual([
      `its commit ${other} is not in this branch's history`,
    ]);
    expect(provenanceProblems({ commit: known }, inHistory)).toEqual(["no date it was recorded (undefined)"]);
    expect(provenanceProblems({ rows: [] }, inHistory)).toEqual(["no provenance (commit and date) recorded"]);
  });
});

describe("docs/three-tiers.json's rules: the real run loose, the simulator's part exact", () => {
  const { rules } = RESULTS_FILES.find((entry) => entry.name === "three-tiers")!;
  const committed = () =>
    JSON.parse(readFileSync(resolve(ROOT, "docs/three-tiers.json"), "utf8")) as {
      sim: { tiers: { peakLoad: number }[] };
      demo: { result: { tiers: { peakLoad: number }[]; metrics: { retryAmplification: number } } };
    };
  const movedWith = (change: (file: ReturnType<typeof committed>) => void) => {
    const file = committed();
    change(file);
    return compareFigures(committed(), file, rules).map((figure) => figure.path);
  };

  it("holds the simulator's figures exactly", () => {
    expect(movedWith((file) => (file.sim.tiers[0]!.peakLoad *= 1.000001))).toEqual(["sim.tiers[0].peakLoad"]);
  });
  it("lets the real run's figures move within 13 %, its peaks within 20 %, and not beyond", () => {
    expect(movedWith((file) => (file.demo.result.metrics.retryAmplification *= 1.12))).toEqual([]);
    expect(movedWith((file) => (file.demo.result.metrics.retryAmplification *= 1.14))).toEqual(["demo.result.metrics.retryAmplification"]);
    expect(movedWith((file) => (file.demo.result.tiers[0]!.peakLoad *= 1.19))).toEqual([]);
    expect(movedWith((file) => (file.demo.result.tiers[0]!.peakLoad *= 1.21))).toEqual(["demo.result.tiers[0].peakLoad"]);
  });
});

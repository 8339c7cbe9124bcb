import { describe, expect, it } from "vitest";
import type { ConfigFormat } from "../../../src/check/format.ts";
import { smallestQualifying } from "../../../src/check/grade.ts";
import { settingsKey } from "../../../src/check/neighbours.ts";
import { changedLines, explicitTarget, writtenVariants } from "../../../src/check/variants.ts";
import type { CandidateSummary } from "../../../src/recommend/summary.ts";
import { flagsFormat } from "../../helpers/flags-format.ts";

const FILE = `{\n  "policies": {\n    "api": {\n      "strategy": "full-jitter",\n      "min-delay": "100ms",\n      "max-delay": "1s"\n    }\n  }\n}\n`;
const USER = { strategy: "full-jitter", "min-delay": "100ms", "max-delay": "1s" };

describe("a change written into the user's file", () => {
  it("is what the file then reads as, with the lines it changed counted", () => {
    const { variants } = writtenVariants(
      flagsFormat,
      FILE,
      0,
      [{ change: "longer", target: { ...USER, "max-delay": "10s" } }],
      new Set([settingsKey(USER)]),
    );
    expect(variants).toHaveLength(1);
    expect(variants[0]!.settings).toEqual({ ...USER, "max-delay": "10s" });
    expect(variants[0]!.changedLines).toBe(2);
    expect(variants[0]!.text).toContain('"max-delay": "10s"');
  });

  it("is dropped when the file reads back as the user's policy or as a change already tried", () => {
    const rounding: ConfigFormat = { ...flagsFormat, write: (text) => ({ kind: "written", text, notes: ["cannot say it"] }) };
    const { variants } = writtenVariants(
      rounding,
      FILE,
      0,
      [{ change: "longer", target: { ...USER, "max-delay": "10s" } }],
      new Set([settingsKey(USER)]),
    );
    expect(variants).toEqual([]);
  });

  it("that the format cannot say is reported with why, not simulated", () => {
    const { variants, unwritable } = writtenVariants(
      flagsFormat,
      FILE,
      0,
      [{ change: "a breaker", target: { ...USER, breaker: "consecutive" } }],
      new Set(),
    );
    expect(variants).toEqual([]);
    expect(unwritable).toEqual([{ change: "a breaker", why: "this format has no breaker" }]);
  });

  it("that the format cannot read back is the format's error, named", () => {
    const broken: ConfigFormat = { ...flagsFormat, write: () => ({ kind: "written", text: "{", notes: [] }) };
    expect(() => writtenVariants(broken, FILE, 0, [{ change: "x", target: USER }], new Set())).toThrow(
      /the flags format wrote a file it cannot read back/,
    );
  });

  it("spells out a candidate's strategy parameters and keeps the user's per-try timeout", () => {
    expect(explicitTarget({ strategy: "full-jitter", "max-attempts": "3" }, { ...USER, timeout: "300ms" })).toEqual({
      "min-delay": "100ms",
      "max-delay": "5m0s",
      strategy: "full-jitter",
      "max-attempts": "3",
      timeout: "300ms",
    });
  });

  it("says -retry-budget as the budget it is, -budget grpc, for a format that knows budgets by kind", () => {
    expect(explicitTarget({ strategy: "fixed", "retry-budget": "true" }, USER)).toEqual({
      "simple-backoff-delay": "100ms",
      strategy: "fixed",
      budget: "grpc",
    });
  });

  it("counts lines removed and added", () => {
    expect(changedLines("a\nb\nc\n", "a\nB\nc\n")).toBe(2);
    expect(changedLines("a\n", "a\n")).toBe(0);
  });
});

describe("the smallest change that qualifies", () => {
  const summary = (id: string, survivesAll: boolean, sloSuccess: number) =>
    ({
      candidate: { id },
      survivesAll,
      everyday: { sloSuccess, retriedP99Ms: 100, amplification: 1, spread: { sloSuccess: 0, retriedP99Ms: 0, amplification: 0 } },
      outages: [],
      longestSurvivedMs: 0,
      longestIsAtLeast: false,
      listedSurvived: 0,
      candidateLever: "default",
    }) as unknown as CandidateSummary;
  const entry = (id: string, changedLines: number, survivesAll: boolean, sloSuccess = 0.99) => ({
    variant: { changedLines, id },
    summary: { ...summary(id, survivesAll, sloSuccess), candidate: { id, lever: "default" } } as unknown as CandidateSummary,
  });

  it("is the fewest lines among those that qualify, then the first by choose's ranking", () => {
    const picked = smallestQualifying([
      entry("big", 8, true, 0.999),
      entry("small-worse", 2, true, 0.95),
      entry("small-better", 2, true, 0.99),
      entry("tiny", 1, false),
    ]);
    expect(picked?.variant.id).toBe("small-better");
  });

  it("is none when nothing tried qualifies", () => {
    expect(smallestQualifying([entry("a", 1, false), entry("b", 2, false)])).toBeUndefined();
  });
});

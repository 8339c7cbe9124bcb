import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseCells, chooseHeadline } from "../../src/choose/readme-table.ts";
import { DEFAULT_OUTAGES_MS } from "../../src/options/measure.ts";
import { rankingRule } from "../../src/recommend/ranking.ts";
import { faultsCells } from "../../src/report/faults-table.ts";
import { comparisonCells } from "../../src/report/readme-table.ts";
import { chainComparisonCells, type ChainComparisonFile } from "../../src/report/tier-table.ts";

/*
 * Every comparison table in the README and the pages its tables moved to says what its results
 * file says. A table marked
 * `<!-- figures: docs/<file>.json -->` must equal, cell by cell, the table that file gives
 * (scripts/readme-table.ts prints it). A choose table marked `<!-- choose: docs/<file>.json -->`
 * equals the table a recorded choose run gives, and the quoted line after
 * `<!-- choose-headline: docs/<file>.json -->` is its recommendation's first line
 * (scripts/choose-record.ts prints both). The ranking rule docs/choose.md states is the one
 * choose prints with its default flags.
 */

const ROOT = resolve(import.meta.dirname, "../..");
/** The README, and the pages its tables moved to when it became a front page (issue 38). */
const PAGES = ["README.md", "docs/demo.md", "docs/simulator.md", "docs/protection.md", "docs/choose.md", "docs/tiers.md"] as const;
const read = (page: string) => readFileSync(resolve(ROOT, page), "utf8");
const texts = PAGES.map((page) => ({ page, text: read(page) }));

/** Every match of a marker's pattern on every page, with the page it is on. */
function matchesOf(pattern: RegExp): { page: string; file: string; body: string }[] {
  return texts.flatMap(({ page, text }) => [...text.matchAll(pattern)].map((match) => ({ page, file: match[1]!, body: match[2]! })));
}

const marked = matchesOf(/<!-- figures: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g).map(({ page, file, body }) => ({
  page,
  file,
  table: body,
}));
const chooseTables = matchesOf(/<!-- choose: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g).map(({ page, file, body }) => ({
  page,
  file,
  table: body,
}));
const faultTables = matchesOf(/<!-- faults: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g).map(({ page, file, body }) => ({
  page,
  file,
  table: body,
}));
const headlines = matchesOf(/<!-- choose-headline: (docs\/[\w.-]+\.json) -->\n+> (.*)\n/g).map(({ page, file, body }) => ({
  page,
  file,
  line: body,
}));

const chainTables = matchesOf(/<!-- tiers: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g).map(({ page, file, body }) => ({
  page,
  file,
  table: body,
}));
const chainHeadlines = matchesOf(/<!-- tiers-choose: (docs\/[\w.-]+\.json) -->\n+> (.*)\n/g).map(({ page, file, body }) => ({
  page,
  file,
  line: body,
}));

function cellsOf(table: string): string[][] {
  return table
    .trim()
    .split("\n")
    .map((line) =>
      line
        .trim()
        .replace(/^\||\|$/g, "")
        .split("|")
        .map((cell) => cell.trim()),
    )
    .filter((cells) => !cells.every((cell) => /^:?-+:?$/.test(cell)));
}

describe("the figures of the README and its pages", () => {
  it("has tables marked with their results file", () => {
    expect(marked.length).toBeGreaterThanOrEqual(2);
  });

  it.each(marked.map((entry, index) => [index, entry.page, entry.file, entry.table] as const))(
    "table %i (%s) agrees with %s",
    (_index, _page, file, table) => {
      expect(cellsOf(table)).toEqual(comparisonCells(readFileSync(resolve(ROOT, file), "utf8")));
    },
  );

  it("has the table of each model with each fault, and it agrees with its results file (scripts/sim-faults.ts)", () => {
    expect(faultTables.map((entry) => entry.file)).toEqual(["docs/sim-faults.json"]);
    for (const { file, table } of faultTables) expect(cellsOf(table)).toEqual(faultsCells(readFileSync(resolve(ROOT, file), "utf8")));
  });

  it("has the chain's table, simulated beside real, and choose's answer for it, each as its results file says (scripts/three-tiers.ts)", () => {
    expect(chainTables.map((entry) => entry.file)).toEqual(["docs/three-tiers.json"]);
    expect(chainHeadlines.map((entry) => entry.file)).toEqual(["docs/three-tiers.json"]);
    for (const { file, table } of chainTables)
      expect(cellsOf(table)).toEqual(chainComparisonCells(readFileSync(resolve(ROOT, file), "utf8")));
    for (const { file, line } of chainHeadlines) {
      const record = JSON.parse(readFileSync(resolve(ROOT, file), "utf8")) as ChainComparisonFile;
      expect(line).toBe(record.choose.recommendation.headline);
    }
  });

  it("has the three systems' choose tables and first lines, marked with their results files", () => {
    expect(chooseTables.length).toBe(3);
    expect(headlines.map((entry) => entry.file)).toEqual(chooseTables.map((entry) => entry.file));
  });

  it.each(chooseTables.map((entry) => [entry.page, entry.file, entry.table] as const))(
    "%s: choose's table agrees with %s",
    (_page, file, table) => {
      expect(cellsOf(table)).toEqual(chooseCells(readFileSync(resolve(ROOT, file), "utf8")));
    },
  );

  it.each(headlines.map((entry) => [entry.page, entry.file, entry.line] as const))(
    "%s: choose's first line agrees with %s",
    (_page, file, line) => {
      expect(line).toBe(chooseHeadline(readFileSync(resolve(ROOT, file), "utf8")));
    },
  );

  it("states, in docs/choose.md, the ranking rule choose prints with its default flags (the article's 2 s timeout: a 10 s SLO)", () => {
    expect(read("docs/choose.md")).toContain(`> ${rankingRule(DEFAULT_OUTAGES_MS, 10_000)}\n`);
  });

  it("recommends for the mobile fleet a policy whose retried requests' p99 is within the SLO", () => {
    const { result } = JSON.parse(readFileSync(resolve(ROOT, "docs/choose-mobile.json"), "utf8")) as {
      result: {
        settings: { sloMs: number };
        ranking: { id: string; everyday: { retriedP99Ms: number | null } }[];
        recommendation: { id: string };
      };
    };
    const winner = result.ranking[0]!;
    expect(winner.id).toBe(result.recommendation.id);
    expect(winner.everyday.retriedP99Ms).not.toBeNull();
    expect(winner.everyday.retriedP99Ms!).toBeLessThanOrEqual(result.settings.sloMs);
  });
});

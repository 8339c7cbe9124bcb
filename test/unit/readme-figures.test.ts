import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseCells, chooseHeadline } from "../../src/choose/readme-table.ts";
import { DEFAULT_OUTAGES_MS } from "../../src/choose/options.ts";
import { rankingRule } from "../../src/choose/ranking.ts";
import { faultsCells } from "../../src/report/faults-table.ts";
import { comparisonCells } from "../../src/report/readme-table.ts";
import { chainComparisonCells, type ChainComparisonFile } from "../../src/report/tier-table.ts";

/*
 * Every comparison table in the README says what its results file says. A table marked
 * `<!-- figures: docs/<file>.json -->` must equal, cell by cell, the table that file gives
 * (scripts/readme-table.ts prints it). A choose table marked `<!-- choose: docs/<file>.json -->`
 * equals the table a recorded choose run gives, and the quoted line after
 * `<!-- choose-headline: docs/<file>.json -->` is its recommendation's first line
 * (scripts/choose-record.ts prints both). The ranking rule the README states is the one
 * choose prints with its default flags.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
const marked = [...readme.matchAll(/<!-- figures: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g)].map((match) => ({
  file: match[1]!,
  table: match[2]!,
}));

const chooseTables = [...readme.matchAll(/<!-- choose: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g)].map((match) => ({
  file: match[1]!,
  table: match[2]!,
}));
const faultTables = [...readme.matchAll(/<!-- faults: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g)].map((match) => ({
  file: match[1]!,
  table: match[2]!,
}));
const headlines = [...readme.matchAll(/<!-- choose-headline: (docs\/[\w.-]+\.json) -->\n+> (.*)\n/g)].map((match) => ({
  file: match[1]!,
  line: match[2]!,
}));

const chainTables = [...readme.matchAll(/<!-- tiers: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g)].map((match) => ({
  file: match[1]!,
  table: match[2]!,
}));
const chainHeadlines = [...readme.matchAll(/<!-- tiers-choose: (docs\/[\w.-]+\.json) -->\n+> (.*)\n/g)].map((match) => ({
  file: match[1]!,
  line: match[2]!,
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

describe("the README's figures", () => {
  it("has tables marked with their results file", () => {
    expect(marked.length).toBeGreaterThanOrEqual(2);
  });

  it.each(marked.map((entry, index) => [index, entry.file, entry.table] as const))("table %i agrees with %s", (_index, file, table) => {
    expect(cellsOf(table)).toEqual(comparisonCells(readFileSync(resolve(ROOT, file), "utf8")));
  });

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

  it.each(chooseTables.map((entry) => [entry.file, entry.table] as const))("choose's table agrees with %s", (file, table) => {
    expect(cellsOf(table)).toEqual(chooseCells(readFileSync(resolve(ROOT, file), "utf8")));
  });

  it.each(headlines.map((entry) => [entry.file, entry.line] as const))("choose's first line agrees with %s", (file, line) => {
    expect(line).toBe(chooseHeadline(readFileSync(resolve(ROOT, file), "utf8")));
  });

  it("states the ranking rule choose prints with its default flags (the article's 2 s timeout: a 10 s SLO)", () => {
    expect(readme).toContain(`> ${rankingRule(DEFAULT_OUTAGES_MS, 10_000)}\n`);
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

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { comparisonCells } from "../../src/report/readme-table.ts";

/*
 * Every comparison table in the README says what its results file says. A table marked
 * `<!-- figures: docs/<file>.json -->` must equal, cell by cell, the table that file gives
 * (scripts/readme-table.ts prints it).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
const marked = [...readme.matchAll(/<!-- figures: (docs\/[\w.-]+\.json) -->\n((?:\s*\|.*\n)+)/g)].map((match) => ({
  file: match[1]!,
  table: match[2]!,
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
});

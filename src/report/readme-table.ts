import { markdownTable } from "./text-table.ts";
import { COMPARISON_HEADER, comparisonRows, type StrategyResult } from "./report.ts";
import { parseSummary } from "./summary-file.ts";

/** The comparison table of a summary.json: the header, then one row of cells per strategy. */
export function comparisonCells(summaryText: string): string[][] {
  const { results } = parseSummary(summaryText);
  // The table reads only the strategy, its phases and its metrics.
  return [[...COMPARISON_HEADER], ...comparisonRows(results as readonly StrategyResult[])];
}

/** The same table in Markdown. */
export function markdownComparison(summaryText: string): string {
  return markdownTable(comparisonCells(summaryText));
}

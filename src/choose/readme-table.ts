import { markdownTable } from "../report/text-table.ts";
import { longestText } from "../recommend/ranking.ts";
import { EVERYDAY_HEADER, everydayCells } from "../recommend/report.ts";
import type { CandidateSummary } from "../recommend/summary.ts";

/*
 * The README's choose tables and first lines, from a results file that
 * scripts/choose-record.ts wrote (choose's -json output and how it was recorded), with the
 * very cells choose prints: the README's figures cannot drift from the file.
 */

/** Rows the README shows: the top five, then fixed retry and no retries where they rank. */
const TOP_ROWS = 5;
const ALWAYS_SHOWN = ["fixed", "no-retries"];

interface RankedEntry {
  readonly rank: number;
  readonly id: string;
  readonly seeds: number;
  readonly everyday: Record<string, unknown>;
  readonly longestSurvivedMs: number;
  readonly longestIsAtLeast: boolean;
  readonly survivesAll: boolean;
}

interface RecordedChoose {
  readonly result: {
    readonly settings: { readonly maxOutageMs: number };
    readonly ranking: readonly RankedEntry[];
    readonly recommendation: { readonly headline: string };
  };
}

/** JSON wrote undefined as null; the cells expect undefined. */
const withoutNulls = (record: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key,
      value === null ? undefined : typeof value === "object" ? withoutNulls(value as Record<string, unknown>) : value,
    ]),
  );

export const CHOOSE_README_HEADER = ["rank", "candidate", "qualifies", ...EVERYDAY_HEADER, "survives"] as const;

/** The README's table of a recorded choose run: the header, then one row of cells per shown candidate. */
export function chooseCells(fileText: string): string[][] {
  const { result } = JSON.parse(fileText) as RecordedChoose;
  const shown = result.ranking.filter((entry, index) => index < TOP_ROWS || ALWAYS_SHOWN.includes(entry.id));
  const rows = shown.map((entry) => {
    // The cells read only these fields of a summary.
    const summary = { ...entry, everyday: withoutNulls(entry.everyday) } as unknown as CandidateSummary;
    return [
      String(entry.rank),
      entry.id,
      entry.survivesAll ? "yes" : "no",
      ...everydayCells(summary),
      longestText(summary, result.settings.maxOutageMs, false),
    ];
  });
  return [[...CHOOSE_README_HEADER], ...rows];
}

/** The recommendation's first line, as choose printed it. */
export function chooseHeadline(fileText: string): string {
  return (JSON.parse(fileText) as RecordedChoose).result.recommendation.headline;
}

/** The table in Markdown. */
export function markdownChoose(fileText: string): string {
  return markdownTable(chooseCells(fileText));
}

/**
 * Figure-by-figure comparison of a results file (docs/*.json) regenerated today with the one
 * committed, for `npm run validate` (scripts/validate.ts). Every leaf of the JSON is a figure,
 * addressed by its path (`results[3].peakConcurrency`); each is held to the first rule whose
 * pattern matches its path, or to the file's default. How the file was recorded (commit, date,
 * machine, load, wall time) is never compared: it changes with every run by design.
 */

/** How far a figure may move: not at all, by a share of the old value (or an absolute floor), or not compared. */
export type Tolerance =
  | { readonly kind: "exact" }
  | { readonly kind: "relative"; readonly relative: number; readonly absolute?: number }
  | { readonly kind: "ignored"; readonly why: string };

export const EXACT: Tolerance = { kind: "exact" };

/** A tolerance for the figures whose path matches: `*` stands for one key or index, `**` for any part of a path. */
export interface FigureRule {
  readonly pattern: string;
  readonly tolerance: Tolerance;
}

export interface ComparisonRules {
  readonly rules?: readonly FigureRule[];
  /** For every figure no rule matches. */
  readonly otherwise: Tolerance;
}

/** A figure that moved beyond its tolerance, or that one side lacks (undefined). */
export interface MovedFigure {
  readonly path: string;
  readonly old: unknown;
  readonly new: unknown;
  readonly tolerance: string;
}

/** Keys that record how and where a file was made, anywhere in it: never figures. */
export const PROVENANCE_KEYS: ReadonlySet<string> = new Set([
  "provenance",
  "commit",
  "uncommittedChanges",
  "date",
  "machine",
  "node",
  "python",
  "wallS",
  "loadAverage1m",
]);

export function describeTolerance(tolerance: Tolerance): string {
  switch (tolerance.kind) {
    case "exact":
      return "exact";
    case "relative":
      return `±${tolerance.relative * 100} %${tolerance.absolute === undefined ? "" : ` or ±${tolerance.absolute}`}`;
    case "ignored":
      return `ignored (${tolerance.why})`;
  }
}

function patternRegExp(pattern: string): RegExp {
  const source = pattern
    .split(/(\*\*|\*)/)
    .map((part) => (part === "**" ? ".*" : part === "*" ? "[^.\\[\\]]+" : part.replace(/[.[\]()+?^$|{}\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`);
}

/** The tolerance that holds the figure at this path. */
export function toleranceAt(path: string, rules: ComparisonRules): Tolerance {
  return rules.rules?.find((rule) => patternRegExp(rule.pattern).test(path))?.tolerance ?? rules.otherwise;
}

function within(old: unknown, now: unknown, tolerance: Tolerance): boolean {
  if (tolerance.kind === "ignored") return true;
  if (tolerance.kind === "relative" && typeof old === "number" && typeof now === "number") {
    return Math.abs(now - old) <= Math.max(tolerance.absolute ?? 0, tolerance.relative * Math.abs(old));
  }
  // Text, verdicts, flags and null are held exactly under any tolerance: only a number can be near another.
  return Object.is(old, now);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const childPath = (path: string, key: string | number) =>
  typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;

/** Every figure of `now` that moved from `old` beyond its tolerance, and every figure only one of them has. */
export function compareFigures(old: unknown, now: unknown, rules: ComparisonRules, path = ""): MovedFigure[] {
  const tolerance = toleranceAt(path, rules);
  if (tolerance.kind === "ignored") return [];
  if (Array.isArray(old) && Array.isArray(now)) {
    const length = Math.max(old.length, now.length);
    return Array.from({ length }, (_, index) => compareFigures(old[index], now[index], rules, childPath(path, index))).flat();
  }
  if (isObject(old) && isObject(now) && !Array.isArray(old) && !Array.isArray(now)) {
    const keys = [...new Set([...Object.keys(old), ...Object.keys(now)])].filter((key) => !PROVENANCE_KEYS.has(key));
    return keys.flatMap((key) => compareFigures(old[key], now[key], rules, childPath(path, key)));
  }
  if (within(old, now, tolerance)) return [];
  return [{ path: path === "" ? "(the whole file)" : path, old, new: now, tolerance: describeTolerance(tolerance) }];
}

/** Every place a file records how it was made: its top level and each object named provenance. */
function recordings(figures: unknown): { commit?: unknown; date?: unknown }[] {
  if (typeof figures !== "object" || figures === null) return [];
  const nested = Object.entries(figures).flatMap(([key, value]) =>
    key === "provenance" ? [value as { commit?: unknown; date?: unknown }] : recordings(value),
  );
  const top = figures as { commit?: unknown; date?: unknown };
  return top.commit !== undefined || top.date !== undefined ? [top, ...nested] : nested;
}

/**
 * What is wrong with how a file says it was made: each commit it names must be one of this branch's
 * (`inHistory`, git merge-base --is-ancestor in scripts/validate.ts; "+dirty" allowed), each with its date.
 */
export function provenanceProblems(figures: unknown, inHistory: (commit: string) => boolean): string[] {
  const found = recordings(figures);
  if (found.length === 0) return ["no provenance (commit and date) recorded"];
  return found.flatMap(({ commit, date }) => {
    const problems: string[] = [];
    if (typeof date !== "string" || Number.isNaN(Date.parse(date))) problems.push(`no date it was recorded (${String(date)})`);
    const base = typeof commit === "string" ? commit.replace(/\+dirty$/, "") : undefined;
    if (base === undefined || !/^[0-9a-f]{40}$/.test(base)) problems.push(`no commit it was recorded at (${String(commit)})`);
    else if (!inHistory(base)) problems.push(`its commit ${base} is not in this branch's history`);
    return problems;
  });
}

/** One line per moved figure: file, JSON path, old, new, tolerance. */
export function formatMoved(file: string, moved: readonly MovedFigure[]): string {
  const shown = (value: unknown) => (value === undefined ? "(absent)" : JSON.stringify(value));
  return moved
    .map((figure) => `${file}: ${figure.path}: ${shown(figure.old)} → ${shown(figure.new)} (tolerance ${figure.tolerance})`)
    .join("\n");
}

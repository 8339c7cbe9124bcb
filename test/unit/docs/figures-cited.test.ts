import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

/*
 * Words that no file backs. A passage of README.md or docs/*.md that names a results file
 * (`docs/<name>.json`) states figures from it: every number in its prose must be a value of that
 * file at the precision printed (a percentage of a share, seconds of milliseconds allowed; a
 * number glued to its unit, 4.7s, 120ms, 2.75x, counts too), and every commit it names must be
 * the commit the file records. Code spans, links, comments and tables are left out: tables have
 * their own checks (readme-figures), and a command's flags are its input, not its figures.
 * docs/validation.md is generated, with its results file, by `npm run validate`, so its passages
 * cite docs/validation-results.json too. Beyond this, a few sentences that summarise a file (a
 * range, a largest gap) are recomputed from it below.
 */

const ROOT = resolve(import.meta.dirname, "../../..");
const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");
/** Each results file parsed once: many passages cite the same one. */
const parsedFiles = new Map<string, unknown>();
const results = (file: string): unknown => {
  if (!parsedFiles.has(file)) parsedFiles.set(file, JSON.parse(read(file)));
  return parsedFiles.get(file);
};

const PAGES = ["README.md", ...readdirSync(resolve(ROOT, "docs")).flatMap((name) => (name.endsWith(".md") ? [`docs/${name}`] : []))];

/** A paragraph or one item of a list: the unit a citation covers. */
function passages(text: string): string[] {
  return text.split(/\n\s*\n|\n(?=\s*[-*] )/).filter((passage) => !passage.trimStart().startsWith("|"));
}

/** Fields whose text is prose written for a page, not a measurement. */
const PROSE_KEYS = new Set(["notes", "note", "why", "published", "description"]);

/** Every number a results file holds, including those inside its strings (commands, notes), and every commit it records. */
function valuesOf(file: string, withProse = false): { numbers: number[]; commits: string[] } {
  const numbers: number[] = [];
  const commits: string[] = [];
  const walk = (value: unknown, key: string): void => {
    // A note is prose a page quotes: it backs nothing, except on docs/validation.md, which is its results file's rendering.
    if (PROSE_KEYS.has(key) && !withProse) return;
    if (typeof value === "number") numbers.push(value);
    else if (typeof value === "string") {
      // A commit field (a results file recorded with uncommitted changes says +dirty), or a commit named in a note.
      const field = /commit/i.test(key) ? /^([0-9a-f]{7,40})(?:\+dirty)?$/.exec(value) : null;
      if (field !== null) commits.push(field[1]!);
      for (const named of value.matchAll(/commit ([0-9a-f]{7,40})\b/g)) commits.push(named[1]!);
      for (const match of value.matchAll(/-?\d+(?:\.\d+)?/g)) numbers.push(Number(match[0]));
    } else if (Array.isArray(value)) value.forEach((item) => walk(item, key));
    else if (value !== null && typeof value === "object") for (const [name, item] of Object.entries(value)) walk(item, name);
  };
  walk(results(file), "");
  return { numbers, commits };
}

/** Prose only: no code spans, links, URLs or comments, no file names (their digits are not figures). */
function proseOf(passage: string): string {
  return passage
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/`[^`]*`/g, "")
    .replace(/\]\([^)]*\)/g, "]")
    .replace(/https?:\/\/\S+/g, "")
    .replace(/[\w./-]+\.(?:json|md|ts|py|yaml|sh)\b/g, "");
}

/** A printed number (thousands grouped by spaces, as the docs write them, or glued to ms, s or x) and its last digit's place. */
function printedNumbers(prose: string): { text: string; value: number; half: number }[] {
  // Not a year written '22.
  return [...prose.matchAll(/(?<![\w.'-])(\d{1,3}(?: \d{3})+|\d+(?:\.\d+)?)(?:ms|s|x)?(?![\w]|\.\d)/g)].map((match) => {
    const text = match[1]!;
    const decimals = text.split(".")[1]?.length ?? 0;
    return { text, value: Number(text.replaceAll(" ", "")), half: 0.5 * 10 ** -decimals + 1e-9 };
  });
}

/** A number printed from one of the file's values: as it is, as a percentage of a share, or in seconds of milliseconds. */
function backedBy(printed: { value: number; half: number }, numbers: readonly number[]): boolean {
  return numbers.some((value) => [value, value * 100, value / 1000].some((scaled) => Math.abs(scaled - printed.value) <= printed.half));
}

interface Citation {
  readonly page: string;
  readonly files: readonly string[];
  readonly prose: string;
  readonly passage: string;
}

/** A passage's files' values; docs/validation.md is docs/validation-results.json rendered, notes and all (npm run validate writes both). */
const citedValues = (citation: Citation) =>
  citation.files.map((file) => valuesOf(file, citation.page === "docs/validation.md" && file === "docs/validation-results.json"));

function citations(): Citation[] {
  return PAGES.flatMap((page) =>
    passages(read(page)).flatMap((passage) => {
      const named = [...passage.matchAll(/docs\/([\w.-]+\.json)/g)].map((match) => `docs/${match[1]!}`);
      const files = [...new Set(page === "docs/validation.md" ? [...named, "docs/validation-results.json"] : named)];
      return files.length === 0 ? [] : [{ page, files, prose: proseOf(passage), passage }];
    }),
  );
}

describe("every figure beside a results file is the file's", () => {
  const all = citations();

  it("finds the passages that cite a results file", () => {
    expect(all.length).toBeGreaterThan(30);
  });

  it("names only the commit the file records", () => {
    const wrong = all.flatMap((citation) => {
      const { page, files, passage } = citation;
      const recorded = citedValues(citation).flatMap((values) => values.commits);
      return [...passage.matchAll(/commit `?([0-9a-f]{7,40})\b/g)]
        .map((match) => match[1]!)
        .filter((commit) => !recorded.some((full) => full.startsWith(commit)))
        .map(
          (commit) =>
            `${page}: commit ${commit}, but ${files.join(", ")} record ${recorded.map((c) => c.slice(0, 7)).join(", ") || "none"}`,
        );
    });
    expect(wrong).toEqual([]);
  });

  it("states only numbers the file holds", () => {
    const unbacked = all.flatMap((citation) => {
      const { page, files, prose } = citation;
      const numbers = citedValues(citation).flatMap((values) => values.numbers);
      return printedNumbers(prose)
        .filter((printed) => !backedBy(printed, numbers))
        .map(({ text }) => {
          const at = prose.indexOf(text);
          return `${page} (${files.join(", ")}): ${text} in "…${prose.slice(Math.max(0, at - 60), at + 20).replaceAll("\n", " ")}…"`;
        });
    });
    expect(unbacked).toEqual([]);
  });
});

interface Summary {
  readonly results: readonly {
    readonly strategy: string;
    readonly metrics: { readonly verdict: string; readonly peakConcurrencyAfterResume: number };
  }[];
}

/** Each phrase appears in the page (its lines joined), or the test names the ones that do not. */
function expectStated(page: string, phrases: readonly string[]): void {
  const text = read(page).replace(/\s+/g, " ");
  expect(phrases.filter((phrase) => !text.includes(phrase)).map((phrase) => `${page} does not say "${phrase}"`)).toEqual([]);
}

describe("sentences that summarise a results file", () => {
  it("docs/simulator.md's agreement of the real programs with the simulator is the largest gap in the files", () => {
    const pairs = [
      ["demo-all-summary", "sim-all-summary"],
      ["demo-presets-summary", "sim-presets-summary"],
      ["demo-presets-instances-1-summary", "sim-presets-instances-1-summary"],
    ].flatMap(([real, simulated]) => {
      const simulatedRuns = (results(`docs/${simulated}.json`) as Summary).results;
      return (results(`docs/${real}.json`) as Summary).results.map((run) => ({
        real: run,
        simulated: simulatedRuns.find((other) => other.strategy === run.strategy)!,
      }));
    });
    const gap = (pair: (typeof pairs)[number]) =>
      Math.abs(pair.simulated.metrics.peakConcurrencyAfterResume / pair.real.metrics.peakConcurrencyAfterResume - 1);
    const sameVerdicts = pairs.filter((pair) => pair.real.metrics.verdict === pair.simulated.metrics.verdict).length;
    const collapsed = pairs.filter((pair) => pair.real.metrics.verdict === "collapsed");
    const recovered = pairs.filter((pair) => pair.real.metrics.verdict === "recovered");
    const largest = (group: typeof pairs) => (100 * Math.max(...group.map(gap))).toFixed(1);
    const recoveries = recovered
      .map(
        (pair) =>
          `${pair.real.strategy} ${pair.real.metrics.peakConcurrencyAfterResume} real, ${pair.simulated.metrics.peakConcurrencyAfterResume} simulated`,
      )
      .join("; ");
    const widest = recovered.reduce((a, b) => (gap(b) > gap(a) ? b : a));
    const more = widest.simulated.metrics.peakConcurrencyAfterResume - widest.real.metrics.peakConcurrencyAfterResume;
    expectStated("docs/simulator.md", [
      `the same verdicts in ${sameVerdicts} of ${pairs.length} runs`,
      `so ${more} more in service in the simulator is a gap of ${(100 * gap(widest)).toFixed(0)} %`,
      `within ${largest(collapsed)} % for each of the ${collapsed.length} that collapse`,
      `(${recoveries})`,
    ]);
  });

  it("docs/tiers.md's range of simulated ÷ real peak loads is the file's", () => {
    interface Tier {
      readonly peakArrivalsPerSec: number;
      readonly normalArrivalsPerSec: number;
    }
    const file = results("docs/tiers-agreement.json") as {
      results: { peakRatios: number[]; real: { tiers: Tier[] }; sim: { tiers: Tier[] } }[];
    };
    const ratios = file.results.flatMap((run) => run.peakRatios);
    const simOverReal = (figure: keyof Tier) =>
      file.results.flatMap((run) => run.real.tiers.map((tier, index) => run.sim.tiers[index]![figure] / tier[figure]));
    const spread = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const median = sorted[(sorted.length - 1) / 2]!;
      return `sim ÷ real ${sorted[0]!.toFixed(3)} to ${sorted.at(-1)!.toFixed(3)}, median ${median.toFixed(3)}`;
    };
    const below = (values: number[]) => values.filter((ratio) => ratio < 1).length;
    const peaks = simOverReal("peakArrivalsPerSec");
    expectStated("docs/tiers.md", [
      `sim ÷ real ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)}`,
      `${below(ratios)} of the ${ratios.length} ratios are below 1`,
      `normal arrival rate is a little below the simulator's (${spread(simOverReal("normalArrivalsPerSec"))})`,
      `(${spread(peaks)}, ${below(peaks)} of ${peaks.length} below 1)`,
    ]);
  });

  it("docs/simulator.md's table of Brooker's windows is his sim.py's sweep (docs/brooker-python.json) beside ./sim's (docs/sim-anchors.json)", () => {
    const table = /\| first retry window .*\n((?:\s*\|.*\n)+)/.exec(read("docs/simulator.md"))![1]!;
    const rows = table
      .trim()
      .split("\n")
      .slice(1)
      .map((line) =>
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    const sweep = (results("docs/brooker-python.json") as { sweep: { rows: { firstWindowS: number; recovered: number }[] } }).sweep.rows;
    const anchors = (results("docs/sim-anchors.json") as { brooker: { clients: { name: string; verdicts: string[] }[] } }).brooker.clients;
    // Each row: its first window, and which of ./sim's anchor clients waits that long.
    const windows: [number, RegExp][] = [
      [0, /^no backoff/],
      [0.1, /^full jitter, this library's defaults/],
      [1, /first window of 1s$/],
      [5, /first window of 5s$/],
      [10, /first window of 10s$/],
      [20, /^backoff and jitter as published/],
    ];
    expect(rows).toHaveLength(windows.length);
    rows.forEach(([label, his, ours], index) => {
      const [firstWindowS, client] = windows[index]!;
      const anchor = anchors.find((candidate) => client.test(candidate.name))!;
      expect([his, ours], label).toEqual([
        String(sweep.find((row) => row.firstWindowS === firstWindowS)!.recovered),
        String(anchor.verdicts.filter((verdict) => verdict === "recovered").length),
      ]);
    });
  });
});

import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseFlags } from "../cli/flags.ts";
import { InputFileError, UsageError } from "../cli/usage-error.ts";
import type { Candidate } from "../recommend/candidates.ts";
import { buildGrid, type Measured as Entry, measureAll, measurePlan, toConfig } from "../recommend/grid-measure.ts";
import { ranking } from "../recommend/ranking.ts";
import type { Timeline } from "../recommend/report.ts";
import type { FlagSettings } from "../recommend/settings.ts";
import type { CandidateSummary } from "../recommend/summary.ts";
import type { ProgramIo, ProgramMain } from "../runtime/program-io.ts";
import { WorkerPool } from "../runtime/worker-pool.ts";
import { blamingScenarioFile, splitScenarioArgument, withScenarioFile } from "../scenario-file/arguments.ts";
import type { ConfigFormat } from "./format.ts";
import { gradeChain } from "./chain.ts";
import { renderChainFiles, renderChainText } from "./chain-render.ts";
import { CONFIG_FORMATS } from "./formats.ts";
import { type CheckInput, readInput, yoursId } from "./input.ts";
import { gradeOf, type Measured, smallestQualifying } from "./grade.ts";
import { neighbourTargets, settingsKey } from "./neighbours.ts";
import {
  CHECK_FLAGS,
  CHECK_TARGET,
  type CheckOptions,
  type CheckOwnValues,
  checkProgram,
  parseCheckArgs,
  splitConfigArgument,
  takeFrom,
} from "../options/check.ts";
import { type CheckOutcome, type PolicyOutcome, renderFiles, renderText } from "./render.ts";
import { explicitTarget, type Unwritable, type Variant, writtenUntil, writtenVariants } from "./variants.ts";

/*
 * `thundering-herd check CONFIG [scenario.yaml]`: the retry configuration a user runs, read in its
 * own format (src/check/formats/), graded on their system by choose's own measure and ranking,
 * and, where it does not qualify, the smallest change to their file that does, found by
 * simulating one-field changes and choose's best candidates as the file can say them.
 */

function formatsHelp(formats: readonly ConfigFormat[]): string {
  return formats.map((format) => `  ${format.name}: ${format.title}\n      ${format.source}\n`).join("");
}

export interface CheckDependencies {
  /** The formats check reads (tests give one of their own). */
  readonly formats?: readonly ConfigFormat[];
  /**
   * -from: `probe -from FILES -out SCENARIO`, the program itself, which check's entries give it
   * (src/bin): check fits load tests as probe does without importing another program.
   */
  readonly probe?: ProgramMain;
}

export async function main(argv: readonly string[], io: ProgramIo, dependencies: CheckDependencies = {}): Promise<number> {
  const formats = dependencies.formats ?? CONFIG_FORMATS;
  const program = checkProgram(formatsHelp(formats));
  const { config, rest } = splitConfigArgument(argv);
  if (config === undefined) {
    const help = parseFlags(program, rest);
    if (help.kind === "help") io.stdout.write(help.text);
    return 0;
  }
  const fromLoadTests = await scenarioFromLoadTests(rest, program, dependencies.probe, io);
  if (typeof fromLoadTests === "number") return fromLoadTests;
  return graded(config, fromLoadTests, program, formats, io);
}

/**
 * -from: the user's load tests fitted by probe -from (its lines on stderr, stdout kept for the
 * answer) into a scenario file beside check's report (-out), kept so that ./sim and choose can
 * take it after, which stands where a given one would; probe's exit code when it cannot fit them.
 * check's own flags are read first: a mistake in them is said before anything is fitted.
 */
async function scenarioFromLoadTests(
  argv: readonly string[],
  program: ReturnType<typeof checkProgram>,
  probe: ProgramMain | undefined,
  io: ProgramIo,
) {
  const { from, rest } = takeFrom(argv);
  if (from === undefined) return rest;
  if (splitScenarioArgument(rest, CHECK_FLAGS).file !== undefined) {
    throw new UsageError("-from gives your system from your load tests: give it or a scenario file, not both");
  }
  const parsed = parseCheckArgs(rest, program);
  if (parsed.kind === "help") return rest;
  if (probe === undefined) throw new Error("check -from needs the probe program, which its entry gives it");
  const out = resolve(parsed.options.own.out);
  mkdirSync(out, { recursive: true });
  const scenario = join(out, `your-service-${new Date().toISOString().replace(/[:.]/g, "-")}.yaml`);
  const code = (await probe(["-from", from, "-out", scenario], { ...io, stdout: io.stderr })) ?? 0;
  return code !== 0 ? code : [scenario, ...rest];
}

/** The grade of the file's policies on the system the arguments describe. */
async function graded(
  config: string,
  rest: readonly string[],
  program: ReturnType<typeof checkProgram>,
  formats: readonly ConfigFormat[],
  io: ProgramIo,
): Promise<number> {
  const { argv: args, scenario } = await withScenarioFile(rest, CHECK_TARGET, io.stderr);
  const commandLine = args.slice(scenario?.tokens.length ?? 0);
  const parsed = await blamingScenarioFile(scenario, commandLine, CHECK_FLAGS, async () => parseCheckArgs(args, program));
  if (parsed.kind === "help") {
    io.stdout.write(parsed.text);
    return 0;
  }
  const options = parsed.options;
  const own = options.own;
  const input = await readInput(config, own, formats);
  if (scenario?.tiers !== undefined) {
    const outcome = await gradeChain(options, own, scenario, input, io);
    if (!options.own.json) renderChainText(outcome, io);
    renderChainFiles(outcome, scenario, options.own.out, options.own.json, io);
    return 0;
  }
  const outcome = await grade(options, own, input, io);
  if (!options.own.json) renderText(outcome, io);
  await renderFiles(outcome, scenario, io);
  return 0;
}

function candidateOf(id: string, family: string, summary: string, client: FlagSettings): Candidate {
  return { id, family, origin: "configuration", summary, client, server: {}, lever: "default", clientId: id };
}

/** The user's policy as a candidate; a setting the simulator refuses is the file's, said with the policy's name. */
function policyEntry(options: CheckOptions, input: CheckInput, policy: CheckInput["policies"][number]): Entry {
  const id = yoursId(input, policy.index);
  const candidate = candidateOf(id, policy.reading.settings.strategy ?? "fixed", `your ${policy.reading.name}`, policy.reading.settings);
  try {
    return { candidate, config: toConfig(options.system, candidate.client, {}) };
  } catch (error) {
    throw new InputFileError(`${input.file}: ${policy.reading.name}: the simulator cannot run it: ${(error as Error).message}`);
  }
}

/** Variants as candidates; one the simulator refuses is set aside with why. */
function variantEntries(
  options: CheckOptions,
  variants: readonly Variant[],
  prefix: string,
  unwritable: Unwritable[],
): (Entry & { readonly variant: Variant })[] {
  return variants.flatMap((variant, index) => {
    const candidate = candidateOf(`${prefix}${index + 1}`, variant.settings.strategy ?? "fixed", variant.change, variant.settings);
    try {
      return [{ candidate, config: toConfig(options.system, candidate.client, {}), variant }];
    } catch (error) {
      unwritable.push({ change: variant.change, why: `the simulator refuses what the file then says: ${(error as Error).message}` });
      return [];
    }
  });
}

/** Entries that say the same settings measured once: the first of each, by what its flags mean as written. */
function measuredOnce<T extends Entry>(entries: readonly T[]): T[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    const key = settingsKey(entry.candidate.client);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * choose's qualifying candidates, best first, written into the policy's place in the file until
 * `count` of them could be (a candidate the format cannot say does not take a place, and is
 * reported); each read back as the file then says it.
 */
function rewrites(input: CheckInput, policy: CheckInput["policies"][number], ranked: readonly CandidateSummary[], count: number) {
  const qualifying = ranked.filter(
    (summary) => summary.survivesAll && summary.candidate.origin !== "configuration" && summary.candidate.origin !== "baseline",
  );
  const proposals = qualifying.map((summary) => ({
    change: `choose's ${summary.candidate.id}`,
    target: explicitTarget(summary.candidate.client, policy.reading.settings),
  }));
  return writtenUntil(input.format, input.text, policy.index, proposals, count, new Set([settingsKey(policy.reading.settings)]));
}

/** Measures choose's grid, the user's policies and their one-field changes, then choose's best as the user's file can say them. */
async function grade(options: CheckOptions, own: CheckOwnValues, input: CheckInput, io: ProgramIo): Promise<CheckOutcome> {
  const plan = measurePlan(options);
  const skipped: string[] = [];
  const grid = buildGrid(options, skipped);
  const yours = input.policies.map((policy) => policyEntry(options, input, policy));
  const unwritable = input.policies.map((): Unwritable[] => []);
  // Each policy's changes are its own: a change that reads back as another policy's is still this one's, measured once.
  const neighbours = input.policies.map((policy, position) => {
    const proposals = neighbourTargets(policy.reading.settings, input.format.knobs);
    const written = writtenVariants(input.format, input.text, policy.index, proposals, new Set([settingsKey(policy.reading.settings)]));
    unwritable[position]!.push(...written.unwritable);
    return variantEntries(options, written.variants, `${yoursId(input, policy.index)}+change-`, unwritable[position]!);
  });
  io.stderr.write(
    `check: ${input.file}: ${input.format.title}, ${input.policies.length} ${input.policies.length === 1 ? "policy" : "policies"}; ` +
      `${grid.length} of choose's candidates, ${neighbours.flat().length} one-field changes; ${options.seeds.length} seeds on ${options.parallel} worker threads\n`,
  );
  const pool = new WorkerPool("choose", options.parallel);
  try {
    const perSeed = new Map<string, CandidateSummary[]>();
    const timelines = new Map<string, Timeline[]>();
    const measure = async (entries: readonly Entry[], label: string) => {
      const unique = measuredOnce(entries);
      return unique.length === 0 ? [] : measureAll(unique, options.seeds, plan, pool, io, label, perSeed, timelines);
    };
    const bySettings = new Map<string, CandidateSummary>();
    const keep = (summaries: readonly CandidateSummary[]) =>
      summaries.forEach((summary) => bySettings.set(settingsKey(summary.candidate.client), summary));
    const gridSummaries = await measureAll(
      grid,
      options.seeds,
      plan,
      pool,
      io,
      "check: simulating choose's candidates",
      perSeed,
      timelines,
    );
    keep(await measure([...yours, ...neighbours.flat()], "check: simulating your policies and their changes"));
    const summaryOf = (entry: Entry) => bySettings.get(settingsKey(entry.candidate.client))!;
    const gridRanked = ranking(gridSummaries).ranked;
    const written = input.policies.map((policy, position) => {
      const found = rewrites(input, policy, gridRanked, own.rewrites);
      unwritable[position]!.push(...found.unwritable);
      return variantEntries(options, found.variants, `${yoursId(input, policy.index)}+choose-`, unwritable[position]!);
    });
    keep(await measure(written.flat(), "check: choose's best in your file"));
    const policies = input.policies.map((policy, position): PolicyOutcome => {
      const summary = summaryOf(yours[position]!);
      const tried: Measured[] = [...neighbours[position]!, ...written[position]!].map((entry) => ({
        variant: entry.variant,
        summary: summaryOf(entry),
      }));
      return {
        reading: policy.reading,
        summary,
        // Ranked among choose's candidates alone, not the file's other policies.
        grade: gradeOf(summary, ranking([...gridSummaries, summary]).ranked),
        smallest: summary.survivesAll ? undefined : smallestQualifying(tried),
        tried,
        unwritable: unwritable[position]!,
      };
    });
    const ranked = ranking([...gridSummaries, ...new Set(policies.map((policy) => policy.summary))]).ranked;
    return { options, input, ranked, first: gridRanked[0]!, policies, timelines, skipped };
  } finally {
    await pool.close();
  }
}

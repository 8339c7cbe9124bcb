import {
  type ChainCandidate,
  chainConfigFor,
  chainGrid,
  type ChainPolicy,
  chainPolicies,
  chainSelectedBy,
} from "../recommend/chain-candidates.ts";
import { chainPlan, measureGrid } from "../recommend/chain-plan.ts";
import { bottomAmplification, chainQualifies, type ChainSummary, rankChain } from "../recommend/chain-ranking.ts";
import { InputFileError } from "../cli/usage-error.ts";
import type { CheckOptions } from "../options/check.ts";
import type { FlagSettings } from "../recommend/settings.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import type { PolicyReading } from "./format.ts";
import { type Measured, smallestQualifying } from "./grade.ts";
import { type CheckInput, yoursId } from "./input.ts";
import { neighbourTargets, settingsKey } from "./neighbours.ts";
import type { CheckOwnValues } from "../options/check.ts";
import { explicitTarget, type Unwritable, type Variant, writtenUntil, writtenVariants } from "./variants.ts";

/*
 * check on a chain of tiers (a scenario file with tiers:): the user's policy at every layer that
 * calls another (the users and each tier but the last), as if every service ran the file, against
 * the file's faults, ranked among choose's chain candidates by choose's chain rule; the first tier
 * to collapse named; and the smallest change to the file that makes the chain qualify, found as for
 * one server (one-field changes and choose's qualifying policies, each at every layer).
 */

/**
 * Where check runs the user's policy in a chain: at every layer that calls another. (Which
 * placement's id that candidate has depends on the chain: in a chain of two, "edge" is every layer.)
 */
const atEveryLayer = (candidate: ChainCandidate) => candidate.layers.every((layer) => layer.retries);

export interface ChainGrade {
  readonly qualifies: boolean;
  readonly sloSuccess: number;
  /** Attempts per user request at the bottom tier while the faults lasted. */
  readonly bottomAmplification: number;
  /** The first tier, from the edge, that stayed down in some run; null when none did. */
  readonly firstCollapsed: string | null;
  /** When the last tier that collapsed was back, from the run's start: 0 if none collapsed, null if one stayed down. */
  readonly backAtMs: number | null;
  readonly rank: number;
  readonly of: number;
}

export interface ChainPolicyOutcome {
  readonly reading: PolicyReading;
  readonly summary: ChainSummary;
  readonly grade: ChainGrade;
  readonly smallest: Measured<Variant, ChainSummary> | undefined;
  readonly tried: readonly Measured<Variant, ChainSummary>[];
  readonly unwritable: readonly Unwritable[];
}

export interface ChainCheckOutcome {
  readonly input: CheckInput;
  readonly sloMs: number;
  readonly schedules: readonly (readonly Fault[])[];
  readonly tiers: readonly string[];
  readonly ranked: readonly ChainSummary[];
  /** choose's first chain candidate: never one of the file's policies. */
  readonly first: ChainSummary;
  readonly policies: readonly ChainPolicyOutcome[];
  readonly skipped: readonly string[];
}

export function chainGradeOf(summary: ChainSummary, ranked: readonly ChainSummary[] = []): ChainGrade {
  return {
    qualifies: chainQualifies(summary),
    sloSuccess: summary.sloSuccess,
    bottomAmplification: bottomAmplification(summary),
    firstCollapsed: summary.tiers.find((tier) => tier.verdict === "collapsed")?.name ?? null,
    backAtMs: summary.backAtMs,
    rank: ranked.indexOf(summary) + 1,
    of: ranked.length,
  };
}

interface Staged {
  readonly policy: ChainPolicy;
  readonly variant: Variant;
}

export async function gradeChain(
  options: CheckOptions,
  own: CheckOwnValues,
  scenario: LoadedScenario,
  input: CheckInput,
  io: ProgramIo,
): Promise<ChainCheckOutcome> {
  const { schedules, base, sloMs } = await chainPlan(options, scenario, io, "check needs the chain's faults to grade against");
  const skipped: string[] = [];
  // The user's policies and their changes at every layer; with `chooseAlso`, choose's chain candidates beside them.
  const measureStage = async (policies: readonly ChainPolicy[], chooseAlso: boolean, label: string) => {
    const mine = new Set(policies.map((policy) => policy.id));
    const grid = chainGrid(base, schedules, skipped, [...policies, ...(chooseAlso ? chainPolicies() : [])]).filter((candidate) =>
      mine.has(candidate.policy) ? atEveryLayer(candidate) : chainSelectedBy(options.candidateFilter, candidate),
    );
    const configs = grid.map((candidate) => schedules.map((schedule) => chainConfigFor(base, candidate, schedule)));
    return measureGrid(grid, configs, options, sloMs, io, label);
  };
  // Policies that say the same settings run once, under the first one's id.
  const ids = new Map<string, string>();
  const policyOf = (id: string, summary: string, settings: FlagSettings): ChainPolicy => {
    const key = settingsKey(settings);
    if (!ids.has(key)) ids.set(key, id);
    return { id: ids.get(key)!, summary, settings };
  };
  const unique = (policies: readonly ChainPolicy[]) =>
    policies.filter((policy, index) => policies.findIndex((other) => other.id === policy.id) === index);
  const yours = input.policies.map((policy) =>
    policyOf(yoursId(input, policy.index), `your ${policy.reading.name}`, policy.reading.settings),
  );
  const unwritable = input.policies.map((): Unwritable[] => []);
  const staged = (variants: readonly Variant[], prefix: string): Staged[] =>
    variants.map((variant, index) => ({ policy: policyOf(`${prefix}${index + 1}`, variant.change, variant.settings), variant }));
  const neighbours = input.policies.map((policy, position): Staged[] => {
    const proposals = neighbourTargets(policy.reading.settings, input.format.knobs);
    const written = writtenVariants(input.format, input.text, policy.index, proposals, new Set([settingsKey(policy.reading.settings)]));
    unwritable[position]!.push(...written.unwritable);
    return staged(written.variants, `${yours[position]!.id}+change-`);
  });
  io.stderr.write(
    `check: ${input.file}: ${input.format.title}, ${input.policies.length} ${input.policies.length === 1 ? "policy" : "policies"} at every layer of the chain ` +
      `${base.tiers.map((tier) => tier.name).join(" → ")}; ${neighbours.flat().length} one-field changes\n`,
  );
  const mine = unique([...yours, ...neighbours.flat().map((entry) => entry.policy)]);
  const first = await measureStage(mine, true, "check: simulating the chain");
  refuseUnrun(input, yours, first, skipped);
  const chooses = first.filter((summary) => !mine.some((policy) => policy.id === summary.candidate.policy));
  const ranked = rankChain(chooses).ranked;
  const qualifying = uniquePolicies(ranked.filter(chainQualifies).map((summary) => summary.candidate));
  const rewrites = input.policies.map((policy, position): Staged[] => {
    const proposals = qualifying.map((chosen) => ({
      change: `choose's ${chosen.id}`,
      target: explicitTarget(chosen.settings, policy.reading.settings),
    }));
    const written = writtenUntil(
      input.format,
      input.text,
      policy.index,
      proposals,
      own.rewrites,
      new Set([settingsKey(policy.reading.settings)]),
    );
    unwritable[position]!.push(...written.unwritable);
    return staged(written.variants, `${yours[position]!.id}+choose-`);
  });
  const again = unique(rewrites.flat().map((entry) => entry.policy)).filter((policy) => !mine.some((other) => other.id === policy.id));
  const second = again.length === 0 ? [] : await measureStage(again, false, "check: choose's best in your file");
  const policies = policyOutcomes(
    input,
    yours,
    [...neighbours.keys()].map((position) => [...neighbours[position]!, ...rewrites[position]!]),
    [...first, ...second],
    ranked,
    unwritable,
  );
  const shown = rankChain([...chooses, ...new Set(policies.map((policy) => policy.summary))]).ranked;
  return { input, sloMs, schedules, tiers: base.tiers.map((tier) => tier.name), ranked: shown, first: ranked[0]!, policies, skipped };
}

/** A policy the chain's simulator refuses at every layer is the file's to fix: said with why, not graded as nothing. */
function refuseUnrun(
  input: CheckInput,
  yours: readonly ChainPolicy[],
  measured: readonly ChainSummary[],
  skipped: readonly string[],
): void {
  input.policies.forEach((policy, position) => {
    const id = yours[position]!.id;
    if (byPolicy(measured, id) !== undefined) return;
    const why =
      skipped
        .find((entry) => entry.includes(`/${id}: `))
        ?.split(": ")
        .slice(1)
        .join(": ") ?? "it runs at no layer";
    throw new InputFileError(`${input.file}: ${policy.reading.name}: the chain cannot run it at every layer: ${why}`);
  });
}

/** A policy's candidate at every layer, among the measured. */
const byPolicy = (summaries: readonly ChainSummary[], id: string) =>
  summaries.find((summary) => summary.candidate.policy === id && atEveryLayer(summary.candidate));

/** Each policy's grade, what was tried around it, and the smallest change that makes the chain qualify. */
function policyOutcomes(
  input: CheckInput,
  yours: readonly ChainPolicy[],
  staged: readonly (readonly Staged[])[],
  all: readonly ChainSummary[],
  ranked: readonly ChainSummary[],
  unwritable: readonly Unwritable[][],
): ChainPolicyOutcome[] {
  return input.policies.map((policy, position): ChainPolicyOutcome => {
    const summary = byPolicy(all, yours[position]!.id)!;
    const tried = staged[position]!.flatMap((entry) => {
      const measured = byPolicy(all, entry.policy.id);
      return measured === undefined ? [] : [{ variant: entry.variant, summary: measured }];
    });
    return {
      reading: policy.reading,
      summary,
      // Ranked among choose's chain candidates alone, not the file's other policies.
      grade: chainGradeOf(summary, rankChain([...ranked, summary]).ranked),
      smallest: chainQualifies(summary)
        ? undefined
        : smallestQualifying(tried, chainQualifies, (summaries) => rankChain(summaries).ranked[0]!),
      tried,
      unwritable: unwritable[position]!,
    };
  });
}

/** The policies of choose's qualifying chain candidates, best first, each once; not the file's own as given (it has no flags to write). */
function uniquePolicies(candidates: readonly ChainCandidate[]): { readonly id: string; readonly settings: FlagSettings }[] {
  const policies = chainPolicies();
  const chosen: { readonly id: string; readonly settings: FlagSettings }[] = [];
  for (const candidate of candidates) {
    const settings = policies.find((policy) => policy.id === candidate.policy)?.settings;
    if (settings !== undefined && !chosen.some((entry) => entry.id === candidate.policy)) chosen.push({ id: candidate.policy, settings });
  }
  return chosen;
}

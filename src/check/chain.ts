import {
  type ChainCandidate,
  chainConfigFor,
  chainGrid,
  type ChainPolicy,
  chainPolicies,
  chainSelectedBy,
} from "../choose/chain-candidates.ts";
import { chainPlan, measureGrid } from "../choose/chain-main.ts";
import { bottomAmplification, chainQualifies, type ChainSummary, rankChain } from "../choose/chain-ranking.ts";
import type { ChooseOptions } from "../choose/options.ts";
import type { FlagSettings } from "../choose/settings.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import type { LoadedScenario } from "../scenario-file/format.ts";
import type { PolicyReading } from "./format.ts";
import { type Measured, smallestQualifying } from "./grade.ts";
import type { CheckInput } from "./input.ts";
import { neighbourTargets, settingsKey } from "./neighbours.ts";
import type { CheckOwnValues } from "./options.ts";
import { explicitTarget, type Unwritable, type Variant, writtenVariants } from "./variants.ts";

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

const yoursId = (input: CheckInput, index: number) => (input.policies.length === 1 ? "yours" : `yours-${index + 1}`);

/** Variants as chain policies, each with the variant it stands for. */
const variantPolicies = (variants: readonly Variant[], prefix: string) =>
  variants.map((variant, index) => ({
    policy: { id: `${prefix}${index + 1}`, summary: variant.change, settings: variant.settings },
    variant,
  }));

interface Staged {
  readonly policy: ChainPolicy;
  readonly variant: Variant;
}

export async function gradeChain(
  options: ChooseOptions,
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
  const yours: ChainPolicy[] = input.policies.map((policy) => ({
    id: yoursId(input, policy.index),
    summary: `your ${policy.reading.name}`,
    settings: policy.reading.settings,
  }));
  const seen = new Set(yours.map((policy) => settingsKey(policy.settings!)));
  const unwritable = input.policies.map((): Unwritable[] => []);
  const neighbours = input.policies.map((policy, position): Staged[] => {
    const written = writtenVariants(
      input.format,
      input.text,
      policy.index,
      neighbourTargets(policy.reading.settings, input.format.knobs),
      seen,
    );
    unwritable[position]!.push(...written.unwritable);
    return variantPolicies(written.variants, `${yours[position]!.id}+change-`);
  });
  io.stderr.write(
    `check: ${input.file}: ${input.format.title}, ${input.policies.length} ${input.policies.length === 1 ? "policy" : "policies"} at every layer of the chain ` +
      `${base.tiers.map((tier) => tier.name).join(" → ")}; ${neighbours.flat().length} one-field changes\n`,
  );
  const first = await measureStage([...yours, ...neighbours.flat().map((entry) => entry.policy)], true, "check: simulating the chain");
  const mine = new Set([...yours, ...neighbours.flat().map((entry) => entry.policy)].map((policy) => policy.id));
  const ranked = rankChain(
    first.filter((summary) => !mine.has(summary.candidate.policy) || yours.some((policy) => policy.id === summary.candidate.policy)),
  ).ranked;
  const rewrites = input.policies.map((policy, position): Staged[] => {
    const best = ranked
      .filter((summary) => chainQualifies(summary) && !mine.has(summary.candidate.policy))
      .map((summary) => summary.candidate);
    const proposals = uniquePolicies(best)
      .slice(0, own.rewrites)
      .map((chosen) => ({ change: `choose's ${chosen.id}`, target: explicitTarget(chosen.settings, policy.reading.settings) }));
    const written = writtenVariants(input.format, input.text, policy.index, proposals, seen);
    unwritable[position]!.push(...written.unwritable);
    return variantPolicies(written.variants, `${yours[position]!.id}+choose-`);
  });
  const second =
    rewrites.flat().length === 0
      ? []
      : await measureStage(
          rewrites.flat().map((entry) => entry.policy),
          false,
          "check: choose's best in your file",
        );
  const policies = policyOutcomes(
    input,
    yours,
    [...neighbours.keys()].map((position) => [...neighbours[position]!, ...rewrites[position]!]),
    [...first, ...second],
    ranked,
    unwritable,
  );
  return { input, sloMs, schedules, tiers: base.tiers.map((tier) => tier.name), ranked, policies, skipped };
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
      grade: chainGradeOf(summary, ranked),
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

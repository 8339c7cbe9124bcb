import type { FlagSpec } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { Fault } from "../model/faults/fault-schedule.ts";
import { playedAs } from "../model/faults/kinds.ts";
import type { ChainConfig } from "../config/chain-config.ts";
import { chainConfigFrom } from "../scenario-file/chain-config.ts";
import type { SimulationFlagValues } from "../config/simulation.ts";
import { type ScenarioTier, UPSTREAM_FLAGS } from "../scenario-file/tiers.ts";
import { clientGrid } from "./candidates.ts";
import { scheduleText } from "../options/measure.ts";
import { type FlagSettings, formatFlagValue, SIM_FLAG_SPECS, simDefaults, simValuesFor } from "./settings.ts";

/*
 * choose for a chain of tiers (docs/tiers.md): where to retry, and how. A candidate is a
 * placement (which layers retry: the users and each tier that calls another) with a policy
 * (the file's own, or one of the grid's strategies) for the layers that retry; the others try
 * once. Every candidate is the file's chain with its layers' policies replaced, read by the
 * simulator's own rules (chainConfigFrom), as the single-server grid is.
 */

export type PlacementId = "edge" | "next-to-fault" | "every-layer-budget" | "every-layer";

export interface Placement {
  readonly id: PlacementId;
  /** How the recommendation says where to retry. */
  readonly where: string;
  readonly summary: string;
}

export const PLACEMENTS: readonly Placement[] = [
  {
    id: "edge",
    where: "at the edge only",
    summary: "retry only at the edge: the users and the first tier retry; the tiers below try once",
  },
  {
    id: "next-to-fault",
    where: "only next to the fault",
    summary: "retry only at the tier next to the fault: the caller of each faulty tier retries; every other layer tries once",
  },
  {
    id: "every-layer-budget",
    where: "at every layer, each with a retry budget",
    summary: "every layer retries, each with gRPC's retry budget (-budget grpc: 10 tokens, a failure costs one, a retry only above 5)",
  },
  { id: "every-layer", where: "at every layer", summary: "every layer retries" },
];

/** The budget "every layer with a budget" adds: gRPC's retry throttling, from the registry. */
export const CHAIN_BUDGET: FlagSettings = { budget: "grpc" };

/** The file's own policies, as given. */
export const AS_GIVEN = "as-given";

/**
 * The policies a retrying layer may get: the file's own, and each strategy of the registry
 * capped at three attempts (the grid's variants; a layer with no limit multiplies without bound).
 */
export interface ChainPolicy {
  readonly id: string;
  readonly summary: string;
  /** The policy's flags at each layer that retries; undefined: each layer's own, as the file gives them. */
  readonly settings: FlagSettings | undefined;
}

export function chainPolicies(): ChainPolicy[] {
  const capped = clientGrid().filter((candidate) => candidate.origin === "variant" && candidate.id.endsWith(":max-attempts=3"));
  return [
    { id: AS_GIVEN, summary: "the file's own policy at each layer", settings: undefined },
    ...capped.map((candidate) => ({ id: candidate.id, summary: candidate.summary, settings: candidate.client })),
  ];
}

/** The policies run when -candidates does not say: the file's own and a few of the grid's, so that a run stays within minutes. */
export const DEFAULT_CHAIN_POLICIES: readonly string[] = [
  AS_GIVEN,
  "fixed:max-attempts=3",
  "full-jitter:max-attempts=3",
  "decorrelated-jitter:max-attempts=3",
];

/** One caller of the chain: the users (toward the edge) or a tier that calls the next. */
export interface LayerPlan {
  readonly name: string;
  readonly retries: boolean;
  /** Its policy flags (the client's retry-policy flags, by name). */
  readonly settings: FlagSettings;
}

export interface ChainCandidate {
  /** `placement/policy`, e.g. `edge/full-jitter:max-attempts=3`. */
  readonly id: string;
  readonly placement: PlacementId;
  readonly policy: string;
  /** The policy in words: "full-jitter, at most 3 attempts per request". */
  readonly policySummary: string;
  readonly summary: string;
  /** The users first, then each tier that calls another, in chain order. */
  readonly layers: readonly LayerPlan[];
}

/** What a chain's candidates start from: the users' and the run's values as ./sim reads the file, and its tiers. */
export interface ChainBase {
  readonly values: SimulationFlagValues;
  readonly tiers: readonly ScenarioTier[];
}

/** The flags of a caller's policy that say how long it waits and what it carries: kept whatever the policy. */
const KEPT = new Set(["timeout", "propagate-deadline", "honor-retry-after"]);
const POLICY_FLAGS: readonly FlagSpec[] = UPSTREAM_FLAGS.filter((flag) => SIM_FLAG_SPECS.has(flag.name));
const kept = (settings: FlagSettings) => Object.fromEntries(Object.entries(settings).filter(([name]) => KEPT.has(name)));

/** The users' policy flags as the file and command line set them (those that differ from the simulator's defaults). */
function usersGiven(values: SimulationFlagValues): FlagSettings {
  const defaults = simDefaults() as unknown as Record<string, unknown>;
  const own = values as unknown as Record<string, unknown>;
  const settings: Record<string, string> = {};
  for (const flag of POLICY_FLAGS) {
    const value = own[flag.name];
    if (flag.name === "timeout" || value === undefined || value === defaults[flag.name]) continue;
    settings[flag.name] = formatFlagValue(flag, value);
  }
  return settings;
}

/** The tiers a schedule's faults strike (a load fault, a spike, is the users' load, not a tier's fault), by index. */
export function faultyTiers(tiers: readonly ScenarioTier[], schedules: readonly (readonly Fault[])[]): number[] {
  const names = tiers.map((tier) => tier.name);
  const struck = schedules.flat().filter((fault) => !playedAs(fault, "load"));
  return [...new Set(struck.map((fault) => (fault.tier === undefined ? 0 : names.indexOf(fault.tier))))].filter((index) => index >= 0);
}

/** Which callers retry in a placement: -1 is the users, i the tier i; undefined when it does not apply (no fault to be next to). */
function retryingLayers(placement: PlacementId, tierCount: number, faulty: readonly number[]): Set<number> | undefined {
  const all = Array.from({ length: tierCount }, (_, index) => index - 1);
  if (placement === "edge") return new Set([-1, 0]);
  if (placement === "next-to-fault") return faulty.length === 0 ? undefined : new Set(faulty.map((tier) => tier - 1));
  return new Set(all);
}

/**
 * Every placement with every policy, checked by the simulator's rules (a combination it
 * refuses, e.g. a backoff strategy with hedging, goes to `skipped` with why); two candidates that make
 * the same chain are one, the first kept.
 */
export function chainGrid(
  base: ChainBase,
  schedules: readonly (readonly Fault[])[],
  skipped: string[],
  policies: readonly ChainPolicy[] = chainPolicies(),
): ChainCandidate[] {
  const faulty = faultyTiers(base.tiers, schedules);
  const given = [usersGiven(base.values), ...base.tiers.slice(0, -1).map((tier) => tier.written.upstream)];
  const names = ["users", ...base.tiers.slice(0, -1).map((tier) => tier.name)];
  const grid: ChainCandidate[] = [];
  const seen = new Set<string>();
  for (const placement of PLACEMENTS) {
    const retrying = retryingLayers(placement.id, base.tiers.length, faulty);
    if (retrying === undefined) continue;
    for (const policy of policies) {
      const layers = given.map((settings, index): LayerPlan => {
        const retries = retrying.has(index - 1);
        const own = policy.settings === undefined ? settings : { ...kept(settings), ...policy.settings };
        const budget = placement.id === "every-layer-budget" ? CHAIN_BUDGET : {};
        return {
          name: names[index]!,
          retries,
          settings: retries ? { ...own, ...budget } : { ...kept(settings), "max-attempts": "1" },
        };
      });
      const candidate: ChainCandidate = {
        id: `${placement.id}/${policy.id}`,
        placement: placement.id,
        policy: policy.id,
        policySummary: policy.summary,
        summary: `${placement.summary}; ${policy.summary}`,
        layers,
      };
      let config: ChainConfig;
      try {
        config = chainConfigFor(base, candidate, schedules[0]);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        skipped.push(`${candidate.id}: ${error.message}`);
        continue;
      }
      // The same chain once, however its flags were written (a default spelt out or left out).
      const key = JSON.stringify(config);
      if (seen.has(key)) continue;
      seen.add(key);
      grid.push(candidate);
    }
  }
  return grid;
}

/** The file's chain as it is: always run, as the baseline the others are measured against. */
export const AS_THE_FILE_SAYS = `every-layer/${AS_GIVEN}`;

/**
 * Whether -candidates selects a chain candidate (exact ids, or prefixes ending in *); without
 * it, the default policies. The file's chain as it is always runs.
 */
export function chainSelectedBy(filter: readonly string[] | undefined, candidate: ChainCandidate): boolean {
  if (candidate.id === AS_THE_FILE_SAYS) return true;
  if (filter === undefined) return DEFAULT_CHAIN_POLICIES.includes(candidate.policy);
  return filter.some((pattern) => (pattern.endsWith("*") ? candidate.id.startsWith(pattern.slice(0, -1)) : candidate.id === pattern));
}

/** The users' values with their policy flags back at the simulator's defaults (their timeout kept), then `settings` over them. */
function usersValues(values: SimulationFlagValues, settings: FlagSettings): SimulationFlagValues {
  const defaults = simDefaults() as unknown as Record<string, unknown>;
  const reset: Record<string, unknown> = { ...values };
  for (const flag of POLICY_FLAGS) if (!KEPT.has(flag.name)) reset[flag.name] = defaults[flag.name];
  return simValuesFor(reset, settings);
}

/** A candidate's chain with one fault schedule, by the simulator's rules; a UsageError for what it refuses. */
export function chainConfigFor(base: ChainBase, candidate: ChainCandidate, schedule: readonly Fault[] | undefined): ChainConfig {
  const [users, ...callers] = candidate.layers;
  const tiers = base.tiers.map((tier, index): ScenarioTier => {
    const layer = callers[index];
    if (layer === undefined) return tier;
    return {
      ...tier,
      upstream: Object.entries(layer.settings).map(([name, value]) => `-${name}=${value}`),
      written: { ...tier.written, upstream: layer.settings },
    };
  });
  let values: SimulationFlagValues;
  try {
    values = usersValues(base.values, users!.settings);
  } catch (error) {
    throw new UsageError(`users: ${(error as Error).message}`);
  }
  return chainConfigFrom({ ...values, faults: schedule === undefined ? undefined : scheduleText(schedule) }, tiers);
}

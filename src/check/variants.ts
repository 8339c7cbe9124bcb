import { diffLines } from "diff";
import type { FlagSettings } from "../recommend/settings.ts";
import { STRATEGIES } from "../strategies/registry.ts";
import type { ConfigFormat } from "./format.ts";
import { type Neighbour, settingsKey } from "./neighbours.ts";

/*
 * A change to the user's file, as check simulates it: the format writes the proposal into the
 * user's own text, and what is simulated is what that text then reads as (a format may round a
 * value, or say it the nearest way it can), so the figures shown beside a diff are the diff's.
 */

export interface Variant {
  readonly policyIndex: number;
  /** What was asked for: "at most 3 attempts (was 5)", or "choose's full-jitter:max-attempts=3". */
  readonly change: string;
  /** The user's file with the change made. */
  readonly text: string;
  /** What that file says for the policy, read back. */
  readonly settings: FlagSettings;
  /** What the format noted while writing (a value it rounded, a limit of the system). */
  readonly notes: readonly string[];
  /** Lines removed plus lines added: how big the change is in the user's own file. */
  readonly changedLines: number;
}

/** What a format could not write, and why: reported, not simulated. */
export interface Unwritable {
  readonly change: string;
  readonly why: string;
}

/** Lines removed plus lines added between two texts. */
export function changedLines(before: string, after: string): number {
  return diffLines(before, after)
    .filter((part) => part.added || part.removed)
    .reduce((sum, part) => sum + part.count, 0);
}

/**
 * Each proposal written into the user's file and read back; those that read back as the user's
 * own policy, or as another proposal's, are dropped (the format could not say the difference).
 */
export function writtenVariants(
  format: ConfigFormat,
  text: string,
  policyIndex: number,
  proposals: readonly Neighbour[],
  seen: Set<string>,
): { readonly variants: Variant[]; readonly unwritable: Unwritable[] } {
  const variants: Variant[] = [];
  const unwritable: Unwritable[] = [];
  for (const proposal of proposals) {
    const written = format.write(text, policyIndex, proposal.target);
    if (written.kind === "inexpressible") {
      unwritable.push({ change: proposal.change, why: written.why });
      continue;
    }
    const settings = readBack(format, written.text, policyIndex);
    const key = settingsKey(settings);
    if (seen.has(key)) continue;
    seen.add(key);
    variants.push({
      policyIndex,
      change: proposal.change,
      text: written.text,
      settings,
      notes: written.notes,
      changedLines: changedLines(text, written.text),
    });
  }
  return { variants, unwritable };
}

/**
 * Proposals written into the user's file, in their order, until `count` read back as changes of
 * their own: one the format cannot say takes no place, and is reported.
 */
export function writtenUntil(
  format: ConfigFormat,
  text: string,
  policyIndex: number,
  proposals: readonly Neighbour[],
  count: number,
  seen: Set<string>,
): { readonly variants: Variant[]; readonly unwritable: Unwritable[] } {
  const variants: Variant[] = [];
  const unwritable: Unwritable[] = [];
  for (const proposal of proposals) {
    if (variants.length >= count) break;
    const written = writtenVariants(format, text, policyIndex, [proposal], seen);
    variants.push(...written.variants);
    unwritable.push(...written.unwritable);
  }
  return { variants, unwritable };
}

/** What a format's own output says: a file it wrote and cannot read is its fault, reported as such. */
function readBack(format: ConfigFormat, text: string, policyIndex: number): FlagSettings {
  try {
    const policy = format.read(text).policies[policyIndex];
    if (policy === undefined) throw new Error(`policy ${policyIndex + 1} is gone`);
    return policy.settings;
  } catch (error) {
    throw new Error(`the ${format.name} format wrote a file it cannot read back: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A candidate's settings with its strategy's parameters spelled out (a grid candidate relies on
 * the registry's defaults), and the user's per-try timeout kept: choose's candidates do not set
 * one, and the user's file does not lose theirs for a change of backoff.
 */
export function explicitTarget(client: FlagSettings, user: FlagSettings): FlagSettings {
  const strategy = STRATEGIES.find((entry) => entry.name === client.strategy);
  const parameters: Readonly<Record<string, string>> = strategy?.parameters ?? {};
  // -retry-budget is -budget grpc (src/strategies/protection.ts): a format knows budgets by kind.
  const { "retry-budget": grpcBudget, ...rest } = client;
  const budget = grpcBudget === "true" ? { budget: "grpc" } : {};
  return { ...parameters, ...rest, ...budget, ...(user.timeout === undefined ? {} : { timeout: user.timeout }) };
}

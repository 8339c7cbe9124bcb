import { policyAmplification } from "../model/tiers/amplification.ts";
import { firstCollapsed, type TierFigures, tierFigures, type TierWindow, tierWindows } from "../model/tiers/tier-figures.ts";
import type { ChainConfig } from "../config/chain-config.ts";
import { simulateChain } from "./chain.ts";
import type { SimulationHooks } from "./simulate.ts";

/** A chain's figures, as ./sim prints them (its `-json` line) and choose ranks them: the users' totals and each tier's figures. */
export interface ChainReport {
  readonly source: "tiers";
  readonly users: { readonly requests: number; readonly ok: number; readonly gaveUp: number; readonly attempts: number };
  readonly tiers: readonly TierFigures[];
  /** The tier that collapsed first (docs/tiers.md); null when none did. */
  readonly firstCollapsed: string | null;
  /** Window by window (-interval), each tier's arrivals and goodput per second, the edge first. */
  readonly windows: readonly { readonly endMs: number; readonly tiers: readonly Omit<TierWindow, "endMs">[] }[];
  readonly durationMs: number;
  readonly seed: number;
}

/** The chain's run and its figures; the hooks see the users' requests (simulateChain). */
export function chainReport(config: ChainConfig, hooks?: SimulationHooks): ChainReport {
  const result = simulateChain(config, hooks);
  const computed = policyAmplification(
    config.retry.maxAttempts,
    config.tiers.slice(0, -1).map((tier) => ({ maxAttempts: tier.upstream!.retry.maxAttempts, fanout: tier.fanout })),
  );
  const faults = config.tiers.flatMap((tier) => tier.faults).concat(config.spikes);
  const normalUntilMs = Math.min(config.durationMs, ...faults.map((fault) => fault.atMs));
  const troubleUntilMs = faults.length === 0 ? 0 : Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));
  const tiers = result.tiers.map((tier, index) =>
    tierFigures({ ...tier, policyAmplification: computed[index]! }, result.userRequests, normalUntilMs, troubleUntilMs),
  );
  const counts = result.users.counts;
  const rates = result.tiers.map((tier) => tierWindows(tier.samples));
  const windows = rates[0]!.map(({ endMs }, index) => ({
    endMs,
    tiers: rates.map((tier) => ({ arrivalsPerSec: tier[index]!.arrivalsPerSec, okPerSec: tier[index]!.okPerSec })),
  }));
  return {
    source: "tiers",
    users: { requests: result.userRequests, ok: counts.ok, gaveUp: counts.gaveUp, attempts: counts.attempts },
    tiers,
    firstCollapsed: firstCollapsed(tiers)?.name ?? null,
    windows,
    durationMs: result.endMs,
    seed: config.seed,
  };
}

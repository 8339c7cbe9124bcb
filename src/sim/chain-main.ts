import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { policyAmplification } from "../model/tiers/amplification.ts";
import { firstCollapsed, type TierFigures, tierFigures, type TierWindow, tierWindows } from "../model/tiers/tier-figures.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { firstCollapsedText, tierText, tierWindowText } from "../report/tier-table.ts";
import { type ScenarioTier, TIER_SYSTEM_FLAGS } from "../scenario-file/tiers.ts";
import { type ChainConfig, simulateChain } from "./chain.ts";
import type { SimulationHooks } from "./simulate.ts";
import { chainConfigFrom } from "./chain-options.ts";
import type { SimFlagValues } from "./options.ts";

/** The flags of ./sim that a chain does not read: a server's (each tier has its own) and the single-server analyses. */
const NOT_FOR_A_CHAIN = new Set([
  ...TIER_SYSTEM_FLAGS.map((flag) => flag.name),
  "strategies",
  "sweep",
  "find-critical-outage",
  "dashboard",
  "out",
  "outage",
  "outage-at",
]);

/** What ./sim prints for a chain, as its JSON line (`-json`): the users' totals and each tier's figures. */
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

/** The report as text: each tier window by window (arrivals and goodput per second), one row per tier, the first collapse and why. */
export function chainText(report: ChainReport, config: ChainConfig): string {
  const first = report.tiers.find((tier) => tier.name === report.firstCollapsed);
  const faultsOf = (name: string) => config.tiers.find((tier) => tier.name === name)!.faults;
  return `${tierWindowText(report)}\n${tierText({ ...report, firstCollapsedText: firstCollapsedText(first, faultsOf) })}`;
}

/** ./sim with a scenario file that has tiers: the chain on the virtual clock, its figures per tier. */
export function chainMain(values: SimFlagValues, given: ReadonlySet<string>, tiers: readonly ScenarioTier[], io: ProgramIo): number {
  const refused = [...given].filter((name) => NOT_FOR_A_CHAIN.has(name));
  if (refused.length > 0) {
    throw new UsageError(`-${refused[0]} does not apply to a chain of tiers: each tier's flags are in its own system and upstream`);
  }
  const config = chainConfigFrom(values, tiers);
  const names = config.tiers.map((tier) => tier.name).join(" → ");
  io.stderr.write(
    `sim: chain ${names}; users ${config.arrivals?.kind === "open" ? `open-loop at ${config.arrivals.ratePerSec}/s` : `${config.users} clients`}, ` +
      `timeout ${formatDuration(config.timeoutMs)}, max attempts ${Number.isFinite(config.retry.maxAttempts) ? config.retry.maxAttempts : "no limit"}; ` +
      `run ${formatDuration(config.durationMs)}, seed ${config.seed}\n`,
  );
  const report = chainReport(config);
  io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : chainText(report, config));
  return 0;
}

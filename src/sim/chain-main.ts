import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { ProgramIo } from "../runtime/program-io.ts";
import { firstCollapsedText, tierText, tierWindowText } from "../report/tier-table.ts";
import { type ScenarioTier, TIER_SYSTEM_FLAGS } from "../scenario-file/tiers.ts";
import type { ChainConfig } from "../config/chain-config.ts";
import { type ChainReport, chainReport } from "../runner/chain-report.ts";
import { chainConfigFrom } from "../scenario-file/chain-config.ts";
import type { SimFlagValues } from "../options/sim.ts";

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

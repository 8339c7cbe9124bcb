import { serverModelOf } from "../config/server-system.ts";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { resolveRetryPolicy } from "../config/load.ts";
import { type Fault, faultsOfTier, formatFault } from "../model/faults/fault-schedule.ts";
import { playedAs } from "../model/faults/kinds.ts";
import { MIDDLE_TIER_MODELS, middleTierOf } from "../model/servers/models.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import type { ScenarioTier } from "./tiers.ts";
import type { ChainConfig, ChainTierConfig } from "../config/chain-config.ts";
import { parseSimulationArgs, resolveSimulation, type SimulationFlagValues } from "../config/simulation.ts";
import { checkFaultTiers, checkSimulatorBounds, checkSpikeClients, checkSpikesAtEdge, readFaults } from "../config/simulation.ts";

/** A tier's flags (its system or its upstream) read by the simulator's flag table; a mistake names the tier. */
function tierValues(tier: ScenarioTier, tokens: readonly string[], where: string): SimulationFlagValues {
  try {
    const parsed = parseSimulationArgs(tokens);
    if (parsed.kind !== "run") throw new UsageError(`tier ${tier.name}: -h is not a flag of a tier`);
    return parsed.values;
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`tier ${tier.name} ${where}: ${error.message}`);
    throw error;
  }
}

/**
 * The chain a scenario file's `tiers:` describes, with the users, the run and the fault
 * schedule from the rest of the file and the command line. Each tier's system is read as
 * ./server's flags, its upstream as the client's retry-policy flags. A UsageError for what
 * the simulator cannot run.
 */
export function chainConfigFrom(values: SimulationFlagValues, tiers: readonly ScenarioTier[]): ChainConfig {
  const users = resolveSimulation({ ...values, faults: undefined }).client;
  // The users and the run are the simulator's, within its limits (a chain ran 20 000 000 users, or windows of 1µs, as given).
  checkSimulatorBounds(values, values["report-interval"]);
  const faults = values.faults === undefined ? [] : readFaults(values.faults);
  checkSpikeClients(faults, users);
  const names = tiers.map((tier) => tier.name);
  checkFaultTiers(faults, names);
  refuseFaultsAfterTheRun(faults, values.duration);
  checkSpikesAtEdge(faults, names);
  const spikes = faults.filter((fault) => playedAs(fault, "load"));
  const chain = tiers.map((tier, index): ChainTierConfig => {
    const server = resolveSimulation(tierValues(tier, tier.system, "system")).server;
    const bottom = index === tiers.length - 1;
    const model = serverModelOf(server);
    if (!bottom && middleTierOf(model) === undefined) {
      const models = MIDDLE_TIER_MODELS.join(" or ");
      throw new UsageError(
        `tier ${tier.name} calls the next tier, so it is a ${models} model (its threads held during the call): model: ${models}`,
      );
    }
    const upstream = bottom ? undefined : tierValues(tier, tier.upstream, "upstream");
    return {
      name: tier.name,
      model,
      cancelOnDisconnect: server.cancelOnDisconnect,
      maxConcurrency: server.maxConcurrency,
      maxInService: server.maxInService ?? DEFAULT_MAX_IN_SERVICE,
      backlog: server.backlog,
      errorRate: server.errorRate,
      retryAfterMs: server.retryAfterMs,
      dropShed: server.shedWith === "drop",
      deadlineAware: server.deadlineAware,
      upstream: upstream === undefined ? undefined : upstreamPolicy(tier, upstream),
      fanout: tier.fanout,
      faults: faultsOfTier(faults, tier.name, index === 0).filter((fault) => !playedAs(fault, "load")),
    };
  });
  return {
    users: users.clients,
    arrivals: users.arrivals,
    timeoutMs: users.timeoutMs,
    propagateDeadline: users.propagateDeadline,
    retry: users.retry,
    tiers: chain,
    spikes,
    intervalMs: users.intervalMs,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/**
 * A fault the run does not see to its end cannot be judged: the chain would report its tiers
 * held or collapsed in the middle of it. Refused, as the demo refuses it (the single server's
 * run is judged too-short).
 */
function refuseFaultsAfterTheRun(faults: readonly Fault[], durationMs: number): void {
  const late = faults.filter((fault) => fault.atMs + fault.durationMs > durationMs);
  if (late.length === 0) return;
  const text = late.map((fault) => formatFault(fault, formatDuration)).join(", ");
  throw new UsageError(`-faults: the run ends at ${formatDuration(durationMs)}, before ${text} ends: nothing to judge`);
}

function upstreamPolicy(tier: ScenarioTier, values: SimulationFlagValues) {
  try {
    const { timeoutMs, propagateDeadline, retry } = resolveRetryPolicy(values);
    return { timeoutMs, propagateDeadline, retry };
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`tier ${tier.name} upstream: ${error.message}`);
    throw error;
  }
}

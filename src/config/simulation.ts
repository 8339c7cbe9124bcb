import { DurationSyntaxError, formatDuration, parseDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { refusalOf, UsageError } from "../cli/usage-error.ts";
import { DEFAULT_EXPERIMENT_MS, DEFAULT_PHASES } from "../model/experiment-phases.ts";
import { type Fault, FAULT_KINDS, FaultSyntaxError, parseFaults, spikeLoadProblem, tierProblem } from "../model/faults/fault-schedule.ts";
import { FAULT_KIND_DEFINITIONS, playedAs } from "../model/faults/kinds.ts";
import { MAX_ARRIVAL_RATE } from "../model/load.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import { onlyParametersOf, type StrategyName } from "../strategies/registry.ts";
import { LOAD_CONFIG_FLAGS, type LoadConfig, resolveLoadConfig } from "./load.ts";
import { resolveServerSystem, SERVER_SYSTEM_FLAGS, type ServerSystem } from "./server-system.ts";
import type { Outage, SimulationConfig } from "./simulation-config.ts";

/*
 * A simulated run as flags describe it: the users and their policy (load.ts), the server
 * (server-system.ts), the faults and the run's length and seed. ./sim's flag table is this one
 * and its output flags; choose and check read their candidates with it, the demo its prediction,
 * a scenario file's chain its users and tiers. simulationConfigFrom makes it the runner's
 * SimulationConfig, within the simulator's own limits.
 */

/** The most reports (server lines, client windows) one run may make: each is kept for the metrics. */
export const MAX_REPORTS = 10_000_000;
/** The longest run: MAX_REPORTS server reports at the default -report-interval, 1 s (115 days). */
export const MAX_DURATION_MS = MAX_REPORTS * 1000;
/** The most clients one run may simulate: each takes about 250 bytes. */
export const MAX_CLIENTS = 10_000_000;
/**
 * The shortest timeout, and the shortest mean request cycle (think time + base delay): in
 * virtual time nothing else bounds how many attempts a client makes per second, and below
 * about a microsecond a step no longer advances the clock at all.
 */
export const MIN_CYCLE_MS = 1;

const durationList = (text: string) => text.split(",").map((part) => parseDuration(part.trim()));
const durationListProblem = (text: string) => {
  try {
    return durationList(text).every((value) => value >= 0) ? undefined : "must not be negative";
  } catch (error) {
    if (!(error instanceof DurationSyntaxError)) throw error;
    return "must be one or more comma-separated durations, e.g. 15s or 15s,60s";
  }
};

/** The -faults flag of ./sim and the demo: one reader and one check, with Go durations. */
export const readFaults = (text: string): Fault[] => parseFaults(text, parseDuration);

export const faultsProblem = (text: string): string | undefined => refusalOf(() => readFaults(text), FaultSyntaxError);

/**
 * A UsageError for a spike that would offer more than the programs run, checked before anything
 * runs: MAX_CLIENTS users (the herd's × its factor), or MAX_ARRIVAL_RATE arrivals per second (the
 * open loop's -rate × its factor; each an event of the simulator's, a rate of the demo's spike client).
 */
export function checkSpikeClients(
  faults: readonly Fault[],
  herd: {
    readonly clients: number;
    readonly arrivals: { readonly kind: "closed" } | { readonly kind: "open"; readonly ratePerSec: number };
  },
): void {
  const load =
    herd.arrivals.kind === "open"
      ? { amount: herd.arrivals.ratePerSec, limit: MAX_ARRIVAL_RATE, unit: "arrivals per second" }
      : { amount: herd.clients, limit: MAX_CLIENTS, unit: "clients" };
  const problem = spikeLoadProblem(faults, load, formatDuration);
  if (problem !== undefined) throw new UsageError(`-faults: ${problem}`);
}

/** A UsageError for a fault that names a tier the chain does not have (any tier, with no chain). */
export function checkFaultTiers(faults: readonly Fault[], tierNames: readonly string[]): void {
  const stray = tierProblem(faults, tierNames);
  if (stray !== undefined) throw new UsageError(`-faults: ${stray}`);
}

/** A UsageError for a load fault (a spike) on a tier other than the edge: it is the users' load, and they call the edge. */
export function checkSpikesAtEdge(faults: readonly Fault[], tierNames: readonly string[]): void {
  const stray = faults.find((fault) => playedAs(fault, "load") && fault.tier !== undefined && fault.tier !== tierNames[0]);
  if (stray !== undefined) {
    throw new UsageError(`-faults: a ${stray.kind} is the users' load: give it without a tier (it reaches the edge)`);
  }
}

/** What the kinds mean, for both programs' help. */
export const FAULTS_HELP =
  `fault schedule, kind@start+length[*factor] separated by commas, e.g. "stop@15s+20s, spike@60s+5s*2"; kinds ${FAULT_KINDS.join(", ")} ` +
  `(${FAULT_KIND_DEFINITIONS.map((definition) => definition.help).join("; ")})`;

/** Worker threads for independent simulations: the simulator's runs, and choose's measurements. */
export const PARALLEL_FLAG = {
  name: "parallel",
  group: "run",
  kind: "integer",
  default: undefined,
  min: 1,
  placeholder: "n",
  description:
    "worker threads for the independent runs of -strategies, -sweep and -find-critical-outage (default: every core); the output does not depend on it",
} as const satisfies FlagSpec;

/** The simulator's seed: every run is reproducible, so it has a default. */
export const SIM_SEED_FLAG = {
  name: "seed",
  group: "run",
  kind: "integer",
  default: 1,
  min: 0,
  max: 2 ** 31 - 1,
  placeholder: "n",
  description: "random seed: the same flags and seed give byte-identical output",
} as const satisfies FlagSpec;

/** The faults, the run's length and its seed. */
const SIMULATION_RUN_FLAGS = [
  {
    name: "faults",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "schedule",
    description: `${FAULTS_HELP}; replaces -outage-at and -outage`,
    check: faultsProblem,
  },
  {
    name: "outage-at",
    group: "run",
    kind: "string",
    default: formatDuration(DEFAULT_PHASES.steadyMs),
    placeholder: "durations",
    description:
      "when the server is stopped (SIGSTOP), virtual time; a comma-separated list for several outages (shorthand for -faults stop@…)",
    check: durationListProblem,
  },
  {
    name: "outage",
    group: "run",
    kind: "string",
    default: formatDuration(DEFAULT_PHASES.outageMs),
    placeholder: "durations",
    description: "how long each outage lasts; one value for all, or one per -outage-at",
    check: durationListProblem,
  },
  {
    name: "duration",
    group: "run",
    kind: "duration",
    default: DEFAULT_EXPERIMENT_MS,
    minMs: 0,
    minExclusive: true,
    maxMs: MAX_DURATION_MS,
    description:
      `length of the run, virtual time (default: the demo's ${formatDuration(DEFAULT_PHASES.steadyMs)} steady + ` +
      `${formatDuration(DEFAULT_PHASES.outageMs)} outage + ${formatDuration(DEFAULT_PHASES.observeMs)} observation)`,
  },
  SIM_SEED_FLAG,
] as const satisfies readonly FlagSpec[];

/** Every flag of a simulated run, in ./sim's order. */
export const SIMULATION_FLAGS = [...LOAD_CONFIG_FLAGS, DEBUG_FLAG, ...SERVER_SYSTEM_FLAGS, ...SIMULATION_RUN_FLAGS];

export type SimulationFlagValues = FlagValues<typeof SIMULATION_FLAGS>;

const SIMULATION: ProgramDescription<typeof SIMULATION_FLAGS> = { name: "sim", summary: "a simulated run", flags: SIMULATION_FLAGS };

/** A simulated run's flags as given on a command line (a candidate's, the demo's prediction's, a tier's). */
export function parseSimulationArgs(args: readonly string[]) {
  return parseFlags(SIMULATION, args);
}

/** The users, the server and the faults of one simulated run, as the flags say them. */
export interface SimulatedRun {
  readonly client: LoadConfig;
  readonly server: ServerSystem;
  /** The stops: -outage-at and -outage, or the stops of -faults. */
  readonly outages: Outage[];
  /** The other faults of -faults. */
  readonly faults: Fault[];
}

/**
 * A program's own checks of -faults, each where it falls among the run's (./sim's -sweep and
 * -find-critical-outage): `given` once the users and the server are read, before -faults is;
 * `read` on its faults, once the run's own checks of them passed.
 */
export interface FaultChecks {
  readonly given?: () => void;
  readonly read?: (faults: readonly Fault[]) => void;
}

export function resolveSimulation(values: SimulationFlagValues, checks: FaultChecks = {}): SimulatedRun {
  const client = resolveLoadConfig(values);
  const server = resolveServerSystem(values);
  if (values.faults !== undefined) {
    checks.given?.();
    const defaults = SIMULATION_FLAGS.filter((flag) => flag.name === "outage-at" || flag.name === "outage");
    if (defaults.some((flag) => values[flag.name as "outage-at" | "outage"] !== flag.default)) {
      throw new UsageError("-faults replaces -outage-at and -outage: list the stops in it, e.g. stop@15s+20s");
    }
    const faults = readFaults(values.faults);
    checkSpikeClients(faults, client);
    // A fault on a named tier needs a chain (a scenario file's tiers:, read apart: src/scenario-file/chain-config.ts).
    checkFaultTiers(faults, []);
    checks.read?.(faults);
    const outages = faults.filter((fault) => playedAs(fault, "pause")).map(({ atMs, durationMs }) => ({ atMs, durationMs }));
    return { client, server, outages, faults: faults.filter((fault) => !playedAs(fault, "pause")) };
  }
  const starts = durationList(values["outage-at"]);
  const lengths = durationList(values.outage);
  if (lengths.length !== 1 && lengths.length !== starts.length) {
    throw new UsageError(`-outage lists ${lengths.length} durations for the ${starts.length} outages of -outage-at`);
  }
  const outages = starts.map((atMs, index) => ({ atMs, durationMs: lengths.length === 1 ? lengths[0]! : lengths[index]! }));
  return { client, server, outages, faults: [] };
}

/** The simulation the flag values describe; a UsageError for values the simulator cannot run. */
export function simulationConfigFrom(
  values: SimulationFlagValues & { readonly strategies?: string | undefined },
  checks: FaultChecks = {},
): SimulationConfig {
  // With -strategies a parameter flag is for the strategies that read it (withStrategy); the base
  // strategy's configuration, read for the system and its faults, must not refuse it.
  const base = (values["exponential-backoff"] ? "exponential-backoff" : values.strategy) as StrategyName; // a choice of the flag table
  const options = resolveSimulation(values.strategies === undefined ? values : { ...values, ...onlyParametersOf(base, values) }, checks);
  checkProtection(values);
  checkSimulatorBounds(values, options.server.reportIntervalMs);
  return {
    users: options.client.clients,
    arrivals: options.client.arrivals,
    protection: {
      retryAfterMs: options.server.retryAfterMs,
      deadlines: options.client.propagateDeadline && options.server.deadlineAware,
      errorRate: options.server.errorRate,
      dropShed: options.server.shedWith === "drop",
    },
    timeoutMs: options.client.timeoutMs,
    retry: options.client.retry,
    intervalMs: options.client.intervalMs,
    latency: options.server.latency,
    model: options.server.model,
    cancelOnDisconnect: options.server.cancelOnDisconnect,
    maxConcurrency: options.server.maxConcurrency,
    maxInService: options.server.maxInService ?? DEFAULT_MAX_IN_SERVICE,
    backlog: options.server.backlog,
    reportIntervalMs: options.server.reportIntervalMs,
    outages: options.outages,
    faults: options.faults,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/** Limits of the simulator itself, beyond the flags' own: a run within them completes in bounded memory. */
export function checkSimulatorBounds(values: SimulationFlagValues, reportIntervalMs: number): void {
  const reports = (intervalMs: number) => values.duration / intervalMs;
  if (values.clients > MAX_CLIENTS) {
    throw new UsageError(`invalid value "${values.clients}" for flag -clients: the simulator runs at most ${MAX_CLIENTS} clients`);
  }
  if (reports(reportIntervalMs) > MAX_REPORTS) {
    throw new UsageError(
      `invalid value "${formatDuration(reportIntervalMs)}" for flag -report-interval: more than ${MAX_REPORTS} server reports in -duration ${formatDuration(values.duration)}`,
    );
  }
  if (reports(values.interval) > MAX_REPORTS) {
    throw new UsageError(
      `invalid value "${formatDuration(values.interval)}" for flag -interval: more than ${MAX_REPORTS} client windows in -duration ${formatDuration(values.duration)}`,
    );
  }
  if (values.timeout < MIN_CYCLE_MS) {
    throw new UsageError(
      `invalid value "${formatDuration(values.timeout)}" for flag -timeout: the simulator needs at least ${MIN_CYCLE_MS}ms`,
    );
  }
  if (values.lambda * 1000 + values.baseDelay < MIN_CYCLE_MS) {
    throw new UsageError(
      `invalid value "${values.lambda}" for flag -lambda: with -baseDelay ${formatDuration(values.baseDelay)} a request cycle is under ${MIN_CYCLE_MS}ms, too short for the simulator`,
    );
  }
}

/**
 * Flag combinations that would simulate nothing: in the simulator one command line sets both
 * sides, so a client option that the server's flags make void is a mistake, not a choice.
 */
function checkProtection(values: SimulationFlagValues): void {
  if (values["deadline-aware"] && !values["propagate-deadline"]) {
    throw new UsageError("-deadline-aware needs -propagate-deadline: without it the clients send no deadline");
  }
  const sheds = values["max-concurrency"] !== 0 || (values["queue-limit"] ?? 0) !== 0;
  if (values["honor-retry-after"] && (!sheds || values["retry-after"] === 0)) {
    throw new UsageError(
      "-honor-retry-after needs -max-concurrency (or -queue-limit) and a -retry-after above 0: otherwise no answer carries a Retry-After",
    );
  }
}

import { DurationSyntaxError, formatDuration, parseDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import { WORKLOAD_HELP } from "../cli/workload.ts";
import { DEFAULT_EXPERIMENT_MS, DEFAULT_PHASES } from "../model/experiment-phases.ts";
import { MAX_ARRIVAL_RATE } from "../model/load.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import { IMMEDIATE_ANSWER_MS } from "../runner/network.ts";
import { type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { DEBUG_FLAG } from "../cli/flags.ts";
import { LOAD_CONFIG_FLAGS, type LoadConfig, resolveLoadConfig } from "../config/load.ts";
import { resolveServerSystem, SERVER_SYSTEM_FLAGS, type ServerSystem } from "../config/server-system.ts";
import { onlyParametersOf, presetsHelp, RUN_CHOICES_HELP, type StrategyName, strategyListProblem } from "../strategies/registry.ts";
import { DASHBOARD_FLAGS, SPEED_FLAG } from "../dashboard/options.ts";
import type { Outage, SimulationConfig } from "../runner/simulate.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "../scenario-file/format.ts";
import { type Fault, FAULT_KINDS, FaultSyntaxError, parseFaults, spikeLoadProblem, tierProblem } from "../model/faults/fault-schedule.ts";
import { FAULT_KIND_DEFINITIONS, playedAs } from "../model/faults/kinds.ts";

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

/** Parameters a sweep can vary, each a flag of the simulator. */
export const SWEEPABLE = ["outage", "clients", "lambda", "timeout", "backlog", "limit", "baseDelay", "simple-backoff-delay"] as const;

const durationList = (text: string) => text.split(",").map((part) => parseDuration(part.trim()));
const durationListProblem = (text: string) => {
  try {
    return durationList(text).every((value) => value >= 0) ? undefined : "must not be negative";
  } catch (error) {
    if (!(error instanceof DurationSyntaxError)) throw error;
    return "must be one or more comma-separated durations, e.g. 15s or 15s,60s";
  }
};

/** The -faults flag of ./sim and the demo (which reads this file, ./sim's public face): one reader and one check, with Go durations. */
export const readFaults = (text: string): Fault[] => parseFaults(text, parseDuration);

export const faultsProblem = (text: string): string | undefined => {
  try {
    readFaults(text);
    return undefined;
  } catch (error) {
    if (error instanceof FaultSyntaxError) return error.message;
    throw error;
  }
};

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

const SIM_ONLY_FLAGS = [
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
  {
    name: "json",
    group: "output",
    kind: "boolean",
    default: false,
    description: 'one JSON object per report (with a "source" field) instead of the text lines',
  },
  {
    name: "quiet",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print only the analysis and the summary, not every report line",
  },
  {
    name: "strategies",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "list",
    description: `strategies and presets to compare (default: the one selected): ${RUN_CHOICES_HELP}`,
    check: strategyListProblem,
  },
  {
    name: "find-critical-outage",
    group: "run",
    kind: "boolean",
    default: false,
    description:
      "find by bisection the longest outage after which the server still recovers, per strategy; with -faults listing one fault, its longest length",
  },
  {
    name: "sweep",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "param=values",
    description: `run once per value and strategy and print a table, e.g. outage=5s,10s,20s; one of ${SWEEPABLE.join(", ")}`,
    check: (value) => sweepProblem(value),
  },
  PARALLEL_FLAG,
  {
    name: "out",
    group: "output",
    kind: "string",
    default: undefined,
    placeholder: "dir",
    description: "write results there: with -sweep, sweep.csv and sweep.svg (a phase diagram); otherwise summary.json",
  },
  ...DASHBOARD_FLAGS,
  SPEED_FLAG,
  PRINT_SCENARIO_FLAG,
] as const satisfies readonly FlagSpec[];

export const SIM_FLAGS = [...LOAD_CONFIG_FLAGS, DEBUG_FLAG, ...SERVER_SYSTEM_FLAGS, ...SIM_ONLY_FLAGS];

export const SIM_TARGET: ScenarioTarget = { program: "sim", flags: SIM_FLAGS };

export type SimFlagValues = FlagValues<typeof SIM_FLAGS>;

export const SIM_PROGRAM: ProgramDescription<typeof SIM_FLAGS> = {
  name: "sim",
  summary:
    "The crash experiment in virtual time: the server model and client strategies the real programs run,\n" +
    "on a virtual clock, for up to millions of clients. Takes the client's and the server's flags.\n\n" +
    "Every run finishes in bounded memory. Requests that cannot complete before the end of the run are\n" +
    "counted, not stored. The server holds at most -max-in-service requests in service, as a real one's\n" +
    "memory does: one more and it dies, and the run ends there (the output says so). An answer given at\n" +
    `once (a 503) takes a loopback round trip, ${formatDuration(IMMEDIATE_ANSWER_MS)}. The simulator runs at most ${MAX_CLIENTS} clients and\n` +
    `${MAX_REPORTS} reports of each kind, and needs -timeout and lambda + baseDelay of at least ${formatDuration(MIN_CYCLE_MS)}.\n` +
    `Another workload: ${WORKLOAD_HELP}.`,
  flags: SIM_FLAGS,
  arguments: SCENARIO_ARGUMENT,
  epilog: `Presets (-strategies takes them beside the strategies; flags given on the command line win over a preset's):\n${presetsHelp()}`,
};

export interface SimOptions {
  readonly client: LoadConfig;
  readonly server: ServerSystem;
  /** The stops: -outage-at and -outage, or the stops of -faults. */
  readonly outages: Outage[];
  /** The other faults of -faults. */
  readonly faults: Fault[];
}

export function parseSimArgs(args: readonly string[]) {
  return parseFlags(SIM_PROGRAM, args);
}

export function resolveSimOptions(values: SimFlagValues): SimOptions {
  const client = resolveLoadConfig(values);
  const server = resolveServerSystem(values);
  if (values.faults !== undefined) {
    if (values.sweep !== undefined && parseSweep(values.sweep).param === "outage") {
      throw new UsageError("-faults does not combine with -sweep outage=…, which varies -outage");
    }
    const defaults = SIM_FLAGS.filter((flag) => flag.name === "outage-at" || flag.name === "outage");
    if (defaults.some((flag) => values[flag.name as "outage-at" | "outage"] !== flag.default)) {
      throw new UsageError("-faults replaces -outage-at and -outage: list the stops in it, e.g. stop@15s+20s");
    }
    const faults = readFaults(values.faults);
    checkSpikeClients(faults, client);
    // A fault on a named tier needs a chain (a scenario file's tiers:, read apart: src/scenario-file/chain-config.ts).
    checkFaultTiers(faults, []);
    if (values["find-critical-outage"] && faults.length !== 1) {
      throw new UsageError(`-find-critical-outage varies the length of one fault: -faults lists ${faults.length}`);
    }
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

export function parseSweep(text: string): { param: (typeof SWEEPABLE)[number]; values: string[] } {
  const match = /^([a-zA-Z-]+)=(.+)$/.exec(text);
  if (match === null) throw new UsageError("must be param=value,value,…");
  const param = match[1] as (typeof SWEEPABLE)[number];
  if (!SWEEPABLE.includes(param)) throw new UsageError(`cannot sweep ${match[1]}; one of ${SWEEPABLE.join(", ")}`);
  return { param, values: match[2]!.split(",").map((value) => value.trim()) };
}

function sweepProblem(text: string): string | undefined {
  try {
    parseSweep(text);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
}

/** The simulation the flag values describe; a UsageError for values the simulator cannot run. */
export function configFrom(values: SimFlagValues): SimulationConfig {
  // With -strategies a parameter flag is for the strategies that read it (withStrategy); the base
  // strategy's configuration, read for the system and its faults, must not refuse it.
  const base = (values["exponential-backoff"] ? "exponential-backoff" : values.strategy) as StrategyName; // a choice of the flag table
  const options = resolveSimOptions(values.strategies === undefined ? values : { ...values, ...onlyParametersOf(base, values) });
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
export function checkSimulatorBounds(values: SimFlagValues, reportIntervalMs: number): void {
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
function checkProtection(values: SimFlagValues): void {
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

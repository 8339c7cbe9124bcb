import { formatDuration, parseDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, flagsInGroups } from "../cli/flags.ts";
import { refusalOf, UsageError } from "../cli/usage-error.ts";
import { phaseFlag } from "../config/phase-flags.ts";
import { type Fault, FaultSyntaxError, formatFault, parseFaults } from "../model/faults/fault-schedule.ts";
import { defaultParallelism } from "../runtime/worker-pool.ts";
import { checkSpikeClients, PARALLEL_FLAG, SIMULATION_FLAGS } from "../config/simulation.ts";

/*
 * How choose and check measure candidates on the user's system: the system itself (./sim's
 * flags of the groups system and observation), the outages or fault schedules it must survive,
 * the runs' phases, the users' deadline, the seeds and the worker threads. choose adds its
 * screening, stability, server levers and -validate (src/options/choose.ts); check adds the
 * configuration it grades (src/options/check.ts). Both read their flags into MeasureOptions here.
 */

/**
 * The default SLO, in per-attempt timeouts: room for a first try that times out, a wait and
 * a few more tries, the budget a user's patience gives an interactive request; far enough
 * beyond one timeout that a retry which recovers counts, short enough that a retry after tens
 * of seconds does not.
 */
export const SLO_TIMEOUTS = 5;

/** The everyday error rate choose assumes when none is given: 1 % of attempts fail. */
export const DEFAULT_ERROR_RATE = 0.01;

type SimFlag = (typeof SIMULATION_FLAGS)[number];
const simErrorRate = SIMULATION_FLAGS.find((flag): flag is Extract<SimFlag, { name: "error-rate" }> => flag.name === "error-rate")!;

/** The user's system: ./sim's system and observation flags, the everyday error rate last with choose's default. */
export const SYSTEM_FLAGS: readonly FlagSpec[] = [
  ...flagsInGroups(SIMULATION_FLAGS, ["system", "observation"]).filter((flag) => flag.name !== "error-rate"),
  { ...simErrorRate, default: DEFAULT_ERROR_RATE },
];

const durationList = (text: string) => text.split(",").map((part) => parseDuration(part.trim()));
const DEFAULT_OUTAGES = "5s,20s,60s";
/** The outages a system must survive when -outages does not say. */
export const DEFAULT_OUTAGES_MS: readonly number[] = durationList(DEFAULT_OUTAGES);

/**
 * -faults: fault schedules separated by semicolons, each as ./sim's -faults reads one, times
 * from the run's start as there (the steady state is what comes before the first fault).
 * Each replaces one listed outage and goes by when its last fault ends (that is the
 * "outage" the tables show), so no two may end at the same time.
 */
export function parseSchedules(text: string): Fault[][] {
  const schedules = text
    .split(";")
    .filter((part) => part.trim() !== "")
    .map((part) => parseFaults(part, parseDuration));
  if (schedules.length === 0) throw new FaultSyntaxError('must list at least one schedule, e.g. "capacity@15s+30s*0.4; spike@15s+5s*2"');
  const ends = schedules.map(scheduleEndMs);
  const twice = ends.find((end, index) => ends.indexOf(end) !== index);
  if (twice !== undefined) {
    throw new FaultSyntaxError(`two schedules end at ${formatDuration(twice)}: choose tells them apart by when their last fault ends`);
  }
  return schedules.sort((a, b) => scheduleEndMs(a) - scheduleEndMs(b));
}

/** When a schedule's last fault ends, from the run's start. */
export const scheduleEndMs = (faults: readonly Fault[]): number => Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));

/** A schedule as -faults writes it. */
export const scheduleText = (faults: readonly Fault[]): string => faults.map((fault) => formatFault(fault, formatDuration)).join(", ");

/** What a candidate must survive and how long each of its runs is: the flags before -seeds' neighbours in choose's help. */
export const MEASURE_RUN_FLAGS = [
  {
    name: "outages",
    group: "run",
    kind: "string",
    default: DEFAULT_OUTAGES,
    placeholder: "durations",
    description: "outages the system must survive: a candidate ranks first only if the server recovers from each",
    check: (text) => {
      try {
        return durationList(text).every((ms) => ms > 0) ? undefined : "every outage must be longer than 0";
      } catch {
        return "must be comma-separated durations, e.g. 5s,20s,60s";
      }
    },
  },
  {
    name: "faults",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "schedules",
    description:
      'fault schedules instead of -outages, separated by ";", each as ./sim -faults takes one, times from the run\'s start (not -steady), e.g. ' +
      '"capacity@15s+30s*0.4; spike@15s+5s*2, errors@17s+10s*0.2"; each replaces one listed outage and is shown as when its last fault ends',
    check: (text) => refusalOf(() => parseSchedules(text), FaultSyntaxError),
  },
  phaseFlag("steady", "steady state before each outage"),
  phaseFlag("observe", "observation after each outage: recovery must happen within it"),
  {
    name: "everyday",
    group: "run",
    kind: "duration",
    default: 120_000,
    minMs: 0,
    minExclusive: true,
    description: "length of the everyday run (no outage) that measures success rate, amplification and latency",
  },
  {
    name: "slo",
    group: "run",
    kind: "duration",
    default: undefined,
    minMs: 0,
    minExclusive: true,
    description: `the users' deadline: a request succeeds for its user when it succeeds within it, retries and waits included (default: ${SLO_TIMEOUTS} x -timeout, at most half of -everyday)`,
  },
  {
    name: "max-outage",
    group: "run",
    kind: "duration",
    default: 600_000,
    minMs: 0,
    minExclusive: true,
    description: "the longest outage the bisection tries",
  },
  {
    name: "seeds",
    group: "run",
    kind: "integer",
    default: 3,
    min: 1,
    max: 1000,
    placeholder: "n",
    description: "simulations per measurement, seeds seed…seed+n-1",
  },
] as const satisfies readonly FlagSpec[];

/** The first seed and the worker threads. */
export const MEASURE_SEED_FLAGS = [
  {
    name: "seed",
    group: "run",
    kind: "integer",
    default: 1,
    min: 0,
    // Room for -seeds and -stability-seeds after it.
    max: 2 ** 31 - 1200,
    placeholder: "n",
    description: "first seed: the same flags and seed give the same ranking, whatever -parallel is",
  },
  { ...PARALLEL_FLAG, description: "worker threads for the simulations (default: every core); the ranking does not depend on it" },
] as const satisfies readonly FlagSpec[];

export const CANDIDATES_FLAG = {
  name: "candidates",
  group: "run",
  kind: "string",
  default: undefined,
  placeholder: "list",
  description: "only these candidates (ids as -list prints them; a trailing * matches a prefix); the two baselines always run",
} as const satisfies FlagSpec;

export const JSON_FLAG = {
  name: "json",
  group: "output",
  kind: "boolean",
  default: false,
  description: "print the whole result as one JSON object",
} as const satisfies FlagSpec;

/** -out: where a program writes its report directory, `<program>-<time>`. */
export const outFlag = <P extends string>(program: P) =>
  ({
    name: "out",
    group: "output",
    kind: "string",
    default: "results",
    placeholder: "dir",
    description: `where ${program}-<time>/report.html is written`,
  }) as const satisfies FlagSpec;

/** Every measure flag but the system's, in no program's order: what MeasureOptions reads. */
type MeasureFlags = readonly [
  ...typeof MEASURE_RUN_FLAGS,
  ...typeof MEASURE_SEED_FLAGS,
  typeof CANDIDATES_FLAG,
  typeof JSON_FLAG,
  ReturnType<typeof outFlag>,
  typeof DEBUG_FLAG,
];

export type MeasureOwnValues = FlagValues<MeasureFlags>;

/** The system and how its candidates are measured; `own` holds every flag value of the program that read them. */
export interface MeasureOptions<Own extends MeasureOwnValues = MeasureOwnValues> {
  /** The system flags' values, keyed by flag name. */
  readonly system: Readonly<Record<string, unknown>>;
  readonly own: Own;
  readonly outagesMs: readonly number[];
  /** With -faults: the schedule of each listed outage, in the same order (times from the run's start). */
  readonly schedules?: readonly (readonly Fault[])[] | undefined;
  readonly seeds: readonly number[];
  /** Worker threads for the measurements. */
  readonly parallel: number;
  readonly candidateFilter: readonly string[] | undefined;
  /** The users' deadline (-slo, or SLO_TIMEOUTS x -timeout). */
  readonly sloMs: number;
}

/** The system flags' values out of a program's parsed flags. */
export function systemValues(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const system: Record<string, unknown> = {};
  for (const flag of SYSTEM_FLAGS) system[flag.name] = values[flag.name];
  return system;
}

/**
 * -faults' schedules, checked against the system's load (a spike past the simulator's clients is
 * refused here, not in the workers once they run) and against -outages, which they replace.
 */
export function measureSchedules(own: MeasureOwnValues, system: Readonly<Record<string, unknown>>): Fault[][] | undefined {
  const schedules = own.faults === undefined ? undefined : parseSchedules(own.faults);
  // (An open loop without -rate is refused where the runs' flags are read.)
  const arrivals =
    system.arrivals === "open"
      ? { kind: "open" as const, ratePerSec: (system.rate as number | undefined) ?? 0 }
      : { kind: "closed" as const };
  const herd = { clients: system.clients as number, arrivals };
  for (const schedule of schedules ?? []) checkSpikeClients(schedule, herd);
  if (schedules !== undefined && own.outages !== DEFAULT_OUTAGES) {
    throw new UsageError("-faults replaces -outages: list each schedule in it, separated by semicolons");
  }
  return schedules;
}

/** The measure the flag values describe, with `schedules` from measureSchedules; a UsageError for what cannot be measured. */
export function measureOptionsFrom<Own extends MeasureOwnValues>(
  own: Own,
  system: Readonly<Record<string, unknown>>,
  schedules: readonly (readonly Fault[])[] | undefined,
): MeasureOptions<Own> {
  const outagesMs = schedules?.map(scheduleEndMs) ?? [...new Set(durationList(own.outages))].sort((a, b) => a - b);
  if (outagesMs.some((ms) => ms > own["max-outage"])) {
    throw new UsageError(`invalid value "${own.outages}" for flag -outages: every outage must be at most -max-outage`);
  }
  // The everyday run measures the SLO over the requests that had all of it: a default SLO
  // leaves it at least half the run.
  const sloMs = own.slo ?? Math.min(SLO_TIMEOUTS * (system.timeout as number), own.everyday / 2);
  if (sloMs >= own.everyday) {
    throw new UsageError(
      `invalid value "${formatDuration(sloMs)}" for flag -slo: must be shorter than -everyday (${formatDuration(own.everyday)}), which measures it`,
    );
  }
  const filter = own.candidates
    ?.split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return {
    system,
    own,
    outagesMs,
    schedules,
    seeds: Array.from({ length: own.seeds }, (_, index) => own.seed + index),
    parallel: own.parallel ?? defaultParallelism(),
    candidateFilter: filter,
    sloMs,
  };
}

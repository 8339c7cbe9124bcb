import { formatDuration, parseDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, flagsInGroups, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { DEFAULT_PHASES } from "../model/experiment-phases.ts";
import { type Fault, FaultSyntaxError, formatFault, parseFaults } from "../model/faults/fault-schedule.ts";
import { TARGET_FLAGS } from "../demo/options.ts";
import { type TargetService } from "../runtime/target-service.ts";
import { targetOf } from "../runtime/target-run.ts";
import { defaultParallelism } from "../runtime/worker-pool.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "../scenario-file/format.ts";
import { checkSpikeClients, PARALLEL_FLAG, SIM_FLAGS } from "../sim/options.ts";

/*
 * choose takes the flags of ./sim that describe the user's system (clients or arrival rate,
 * timeout, server model, everyday error rate, instances, …) and how it is measured (the
 * reporting windows): the flag groups system and observation. The strategy, protection and
 * run flags are choose's to set, per candidate; ./sim's output flags mean nothing here.
 */

/**
 * The default SLO, in per-attempt timeouts: room for a first try that times out, a wait and
 * a few more tries, the budget a user's patience gives an interactive request; far enough
 * beyond one timeout that a retry which recovers counts, short enough that a retry after tens
 * of seconds does not.
 */
export const SLO_TIMEOUTS = 5;
/** How far down the first seed's ranking candidates run every seed (-screen-top). */
export const SCREEN_TOP = 10;
/** How many of the top candidates -stability-seeds runs again. */
export const STABILITY_TOP = 3;

/** The everyday error rate choose assumes when none is given: 1 % of attempts fail. */
export const DEFAULT_ERROR_RATE = 0.01;

type SimFlag = (typeof SIM_FLAGS)[number];
const simErrorRate = SIM_FLAGS.find((flag): flag is Extract<SimFlag, { name: "error-rate" }> => flag.name === "error-rate")!;

/** The user's system: ./sim's system and observation flags, the everyday error rate last with choose's default. */
export const SYSTEM_FLAGS: readonly FlagSpec[] = [
  ...flagsInGroups(SIM_FLAGS, ["system", "observation"]).filter((flag) => flag.name !== "error-rate"),
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

const CHOOSE_ONLY_FLAGS = [
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
    check: (text) => {
      try {
        parseSchedules(text);
        return undefined;
      } catch (error) {
        if (error instanceof FaultSyntaxError) return error.message;
        throw error;
      }
    },
  },
  {
    name: "steady",
    group: "run",
    kind: "duration",
    default: DEFAULT_PHASES.steadyMs,
    minMs: 0,
    minExclusive: true,
    description: "steady state before each outage",
  },
  {
    name: "observe",
    group: "run",
    kind: "duration",
    default: DEFAULT_PHASES.observeMs,
    minMs: 0,
    minExclusive: true,
    description: "observation after each outage: recovery must happen within it",
  },
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
  {
    name: "screen-top",
    group: "run",
    kind: "integer",
    default: SCREEN_TOP,
    min: 0,
    max: 10000,
    placeholder: "n",
    description:
      "every candidate runs the first seed; the top n of the ranking (at least 3) and every candidate the answer names (baselines, " +
      "Pareto front, rivals on each figure) run the others, the rest keep the first seed's figures (0: every candidate runs every seed)",
  },
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
  {
    name: "server-side",
    group: "run",
    kind: "boolean",
    default: false,
    description:
      "pair the best client policies with every server lever (backlog, -cancel-on-disconnect, load shedding, …) even when a client " +
      "policy qualifies (without it: only when none does; otherwise the winner alone is paired, to show what the server would add)",
  },
  {
    name: "client-only",
    group: "run",
    kind: "boolean",
    default: false,
    description: "try no server lever at all",
  },
  {
    name: "stability-seeds",
    group: "run",
    kind: "integer",
    default: 5,
    min: 0,
    max: 100,
    placeholder: "n",
    description: `run the top ${STABILITY_TOP} on this many more seeds and count how often each wins (0: none)`,
  },
  {
    name: "candidates",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "list",
    description: "only these candidates (ids as -list prints them; a trailing * matches a prefix); the two baselines always run",
  },
  {
    name: "list",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print the grid of candidates and the simulations it costs, and exit",
  },
  { name: "json", group: "output", kind: "boolean", default: false, description: "print the whole result as one JSON object" },
  {
    name: "out",
    group: "output",
    kind: "string",
    default: "results",
    placeholder: "dir",
    description: "where choose-<time>/report.html is written",
  },
  {
    name: "validate",
    group: "run",
    kind: "boolean",
    default: false,
    description:
      "re-run the top candidates and -validate-against with the real ./server and ./client, and compare; " +
      "with -target, the winner and -validate-against on your service, and whether choose's order holds there",
  },
  {
    name: "validate-against",
    group: "run",
    kind: "string",
    default: "fixed",
    placeholder: "candidate",
    description: "the named loser -validate runs beside the winner (a candidate of -list)",
  },
  ...TARGET_FLAGS,
  {
    name: "validate-top",
    group: "run",
    kind: "integer",
    default: 3,
    min: 1,
    max: 20,
    placeholder: "n",
    description: "how many top candidates -validate runs",
  },
  {
    name: "validate-outage",
    group: "run",
    kind: "duration",
    default: undefined,
    minMs: 0,
    minExclusive: true,
    description: "the outage -validate uses (default: the middle one of -outages)",
  },
  PRINT_SCENARIO_FLAG,
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const CHOOSE_FLAGS: readonly FlagSpec[] = [...SYSTEM_FLAGS, ...CHOOSE_ONLY_FLAGS];

/** choose's flags that grade candidates as choose does, for a program that runs choose's measure on other candidates (check). */
export const CHOOSE_MEASURE_FLAGS: readonly FlagSpec[] = CHOOSE_FLAGS.filter(
  (flag) =>
    ![
      ...["server-side", "client-only", "stability-seeds", "screen-top", "list", "print-scenario"],
      ...["validate", "validate-top", "validate-outage", "validate-against", "target", "target-cmd", "target-pid"],
    ].includes(flag.name),
);

const CHOOSE_PROGRAM: ProgramDescription<readonly FlagSpec[]> = {
  name: "choose",
  summary:
    "Ranks retry policies for your system: every strategy and preset of the registry, with a few variants, in the\n" +
    "simulator; success within the users' deadline (-slo), the wait of retried requests, amplification, and the outages\n" +
    "each survives; the server's levers when no client policy is enough. Describe your system\n" +
    "with ./sim's flags (clients, lambda, timeout, limit, factor, baseDelay, k, backlog, error rate, …). With a scenario\n" +
    "file that has tiers:, ranks where in the chain to retry (at the edge, next to the fault, every layer with a budget,\n" +
    "every layer) against the file's faults (docs/tiers.md).",
  flags: CHOOSE_FLAGS,
  arguments: SCENARIO_ARGUMENT,
};

export const CHOOSE_TARGET: ScenarioTarget = { program: "choose", flags: CHOOSE_FLAGS };

export type ChooseOwnValues = FlagValues<typeof CHOOSE_ONLY_FLAGS>;

export interface ChooseOptions {
  /** The system flags' values, keyed by flag name. */
  readonly system: Readonly<Record<string, unknown>>;
  readonly own: ChooseOwnValues;
  readonly outagesMs: readonly number[];
  /** With -faults: the schedule of each listed outage, in the same order (times from the run's start). */
  readonly schedules?: readonly (readonly Fault[])[] | undefined;
  readonly seeds: readonly number[];
  /** Worker threads for the measurements. */
  readonly parallel: number;
  readonly candidateFilter: readonly string[] | undefined;
  readonly validateOutageMs: number;
  /** The users' deadline (-slo, or SLO_TIMEOUTS x -timeout). */
  readonly sloMs: number;
  /** The extra seeds the top candidates run on for the stability count. */
  readonly stabilitySeeds: readonly number[];
  /** -validate's service of the user's (-target), not started yet; undefined: ./server. */
  readonly target: TargetService | undefined;
}

export type ChooseParse = { readonly kind: "help"; readonly text: string } | { readonly kind: "run"; readonly options: ChooseOptions };

/** choose's options; `program` is another flag table over choose's (check's), whose own values come in `own` too. */
export function parseChooseArgs(argv: readonly string[], program: ProgramDescription<readonly FlagSpec[]> = CHOOSE_PROGRAM): ChooseParse {
  const parsed = parseFlags(program, argv);
  if (parsed.kind === "help") return parsed;
  const all = parsed.values as Record<string, unknown>;
  const own = all as unknown as ChooseOwnValues;
  const system: Record<string, unknown> = {};
  for (const flag of SYSTEM_FLAGS) system[flag.name] = all[flag.name];
  const schedules = own.faults === undefined ? undefined : parseSchedules(own.faults);
  // A spike past the simulator's clients is refused here, not in the workers once they run.
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
  if (schedules !== undefined && own.validate) {
    throw new UsageError("-validate re-runs stops with the real programs: it does not combine with -faults");
  }
  const target = validationTarget(own);
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
    kind: "run",
    options: {
      system,
      own,
      outagesMs,
      schedules,
      seeds: Array.from({ length: own.seeds }, (_, index) => own.seed + index),
      stabilitySeeds: Array.from({ length: own["stability-seeds"] }, (_, index) => own.seed + own.seeds + index),
      parallel: own.parallel ?? defaultParallelism(),
      candidateFilter: filter,
      validateOutageMs: own["validate-outage"] ?? outagesMs[Math.floor((outagesMs.length - 1) / 2)]!,
      sloMs,
      target,
    },
  };
}

/** -target's service for -validate, checked now: -validate stops it, so it needs its command or its pid. */
function validationTarget(own: ChooseOwnValues): TargetService | undefined {
  // check's flags, over choose's measure, have no -target.
  if ((own as Partial<ChooseOwnValues>).target === undefined) return undefined;
  if (own.target !== "" && !own.validate) throw new UsageError("-target runs -validate's experiment on your service: it needs -validate");
  const target = targetOf(own, [], false, false);
  if (target !== undefined && own["server-side"])
    throw new UsageError("-server-side ranks ./server's levers, which your service does not have: -target ranks client policies only");
  if (target !== undefined && target.control.kind === "none")
    throw new UsageError("-validate stops your service (SIGSTOP, SIGCONT): -target needs -target-cmd or -target-pid");
  return target;
}

import { availableParallelism } from "node:os";
import { parseDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { STRATEGY_PARAMETER_FLAGS } from "../strategies/registry.ts";
import { SIM_FLAG_SPECS } from "./settings.ts";

/*
 * choose takes the flags of ./sim that describe the user's system (clients or arrival rate,
 * timeout, server model, everyday error rate, instances, …) and its own flags. The flags
 * that describe a retry policy or a simulator run are choose's to set, per candidate.
 */

/** Flags of ./sim that choose sets itself: the retry policy, and the run. */
const NOT_SYSTEM = new Set<string>([
  "strategy",
  "exponential-backoff",
  ...STRATEGY_PARAMETER_FLAGS.map((flag) => flag.name),
  "max-attempts",
  "retry-budget",
  "preset",
  "budget",
  "throttle",
  "breaker",
  "propagate-deadline",
  "outage-at",
  "outage",
  "faults",
  "duration",
  "seed",
  "json",
  "quiet",
  "strategies",
  "find-critical-outage",
  "sweep",
  "out",
  "debug",
]);
/** Parameters of client-side mechanisms, e.g. -budget-tokens: part of a candidate too. */
const NOT_SYSTEM_PREFIXES = ["budget-", "throttle-", "breaker-"];

/** The everyday error rate choose assumes when none is given: 1 % of attempts fail. */
export const DEFAULT_ERROR_RATE = 0.01;

const simErrorRate = SIM_FLAG_SPECS.get("error-rate");

/** Whether the simulator models an everyday error rate (-error-rate) at all. */
export const ERROR_RATE_MODELLED = simErrorRate !== undefined;

function errorRateFlag(): FlagSpec {
  if (simErrorRate !== undefined && simErrorRate.kind === "number") {
    // A flag whose maximum exceeds 1 counts in percent.
    const percent = simErrorRate.max !== undefined && simErrorRate.max > 1;
    return { ...simErrorRate, default: percent ? DEFAULT_ERROR_RATE * 100 : DEFAULT_ERROR_RATE };
  }
  return {
    name: "error-rate",
    kind: "number",
    default: DEFAULT_ERROR_RATE,
    min: 0,
    max: 1,
    placeholder: "p",
    description: "everyday share of attempts that fail (NOT MODELLED by this simulator yet: accepted and reported, not injected)",
  };
}

/** The user's system: every flag of ./sim that is not choose's to set. */
export const SYSTEM_FLAGS: readonly FlagSpec[] = [
  ...[...SIM_FLAG_SPECS.values()].filter(
    (flag) =>
      flag.name !== "error-rate" && !NOT_SYSTEM.has(flag.name) && !NOT_SYSTEM_PREFIXES.some((prefix) => flag.name.startsWith(prefix)),
  ),
  errorRateFlag(),
];

const durationList = (text: string) => text.split(",").map((part) => parseDuration(part.trim()));

const CHOOSE_ONLY_FLAGS = [
  {
    name: "outages",
    kind: "string",
    default: "5s,20s,60s",
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
  { name: "steady", kind: "duration", default: 15_000, minMs: 0, minExclusive: true, description: "steady state before each outage" },
  {
    name: "observe",
    kind: "duration",
    default: 90_000,
    minMs: 0,
    minExclusive: true,
    description: "observation after each outage: recovery must happen within it",
  },
  {
    name: "everyday",
    kind: "duration",
    default: 120_000,
    minMs: 0,
    minExclusive: true,
    description: "length of the everyday run (no outage) that measures success rate, amplification and latency",
  },
  {
    name: "max-outage",
    kind: "duration",
    default: 600_000,
    minMs: 0,
    minExclusive: true,
    description: "the longest outage the bisection tries",
  },
  {
    name: "seeds",
    kind: "integer",
    default: 3,
    min: 1,
    max: 1000,
    placeholder: "n",
    description: "simulations per measurement, seeds seed…seed+n-1",
  },
  {
    name: "seed",
    kind: "integer",
    default: 1,
    min: 0,
    max: 2 ** 31 - 1000,
    placeholder: "n",
    description: "first seed: the same flags and seed give the same ranking, whatever the number of workers",
  },
  {
    name: "workers",
    kind: "integer",
    default: 0,
    min: 0,
    max: 256,
    placeholder: "n",
    description: "worker threads (0 = one per core)",
  },
  {
    name: "server-side",
    kind: "boolean",
    default: false,
    description: "also try server levers (backlog, -cancel-on-disconnect, load shedding, …) and recommend a client and server pair",
  },
  {
    name: "candidates",
    kind: "string",
    default: undefined,
    placeholder: "list",
    description: "only these candidates (ids as -list prints them; a trailing * matches a prefix); the two baselines always run",
  },
  { name: "list", kind: "boolean", default: false, description: "print the grid of candidates and the simulations it costs, and exit" },
  { name: "json", kind: "boolean", default: false, description: "print the whole result as one JSON object" },
  { name: "out", kind: "string", default: "results", placeholder: "dir", description: "where choose-<time>/report.html is written" },
  {
    name: "validate",
    kind: "boolean",
    default: false,
    description: "re-run the top candidates and fixed retry with the real ./server and ./client, and compare",
  },
  {
    name: "validate-top",
    kind: "integer",
    default: 3,
    min: 1,
    max: 20,
    placeholder: "n",
    description: "how many top candidates -validate runs",
  },
  {
    name: "validate-outage",
    kind: "duration",
    default: undefined,
    minMs: 0,
    minExclusive: true,
    description: "the outage -validate uses (default: the middle one of -outages)",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const CHOOSE_FLAGS: readonly FlagSpec[] = [...SYSTEM_FLAGS, ...CHOOSE_ONLY_FLAGS];

const CHOOSE_PROGRAM: ProgramDescription<readonly FlagSpec[]> = {
  name: "choose",
  summary:
    "Ranks retry policies for your system: every strategy and preset of the registry, with a few variants, in the\n" +
    "simulator; everyday success, amplification and latency, and the outages each survives. Describe your system\n" +
    "with ./sim's flags (clients, lambda, timeout, limit, factor, baseDelay, k, backlog, error rate, …).",
  flags: CHOOSE_FLAGS,
};

export type ChooseOwnValues = FlagValues<typeof CHOOSE_ONLY_FLAGS>;

export interface ChooseOptions {
  /** The system flags' values, keyed by flag name. */
  readonly system: Readonly<Record<string, unknown>>;
  readonly own: ChooseOwnValues;
  readonly outagesMs: readonly number[];
  readonly seeds: readonly number[];
  readonly workers: number;
  readonly candidateFilter: readonly string[] | undefined;
  readonly validateOutageMs: number;
}

export type ChooseParse = { readonly kind: "help"; readonly text: string } | { readonly kind: "run"; readonly options: ChooseOptions };

export function parseChooseArgs(argv: readonly string[]): ChooseParse {
  const parsed = parseFlags(CHOOSE_PROGRAM, argv);
  if (parsed.kind === "help") return parsed;
  const all = parsed.values as Record<string, unknown>;
  const own = all as unknown as ChooseOwnValues;
  const system: Record<string, unknown> = {};
  for (const flag of SYSTEM_FLAGS) system[flag.name] = all[flag.name];
  const outagesMs = [...new Set(durationList(own.outages))].sort((a, b) => a - b);
  if (outagesMs.some((ms) => ms > own["max-outage"])) {
    throw new UsageError(`invalid value "${own.outages}" for flag -outages: every outage must be at most -max-outage`);
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
      seeds: Array.from({ length: own.seeds }, (_, index) => own.seed + index),
      workers: own.workers === 0 ? availableParallelism() : own.workers,
      candidateFilter: filter,
      validateOutageMs: own["validate-outage"] ?? outagesMs[Math.floor((outagesMs.length - 1) / 2)]!,
    },
  };
}

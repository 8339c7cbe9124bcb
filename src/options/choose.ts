import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import {
  CANDIDATES_FLAG,
  JSON_FLAG,
  MEASURE_RUN_FLAGS,
  MEASURE_SEED_FLAGS,
  type MeasureOptions,
  measureOptionsFrom,
  measureSchedules,
  outFlag,
  SYSTEM_FLAGS,
  systemValues,
} from "./measure.ts";
import { type TargetService } from "../runtime/target-service.ts";
import { TARGET_FLAGS, targetOf } from "../runtime/target-run.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "./scenario-target.ts";

/*
 * choose takes the flags of ./sim that describe the user's system (clients or arrival rate,
 * timeout, server model, everyday error rate, instances, …) and how it is measured (the
 * reporting windows): the flag groups system and observation. The strategy, protection and
 * run flags are choose's to set, per candidate; ./sim's output flags mean nothing here. The
 * system and the measure are check's too (src/options/measure.ts).
 */

/** How far down the first seed's ranking candidates run every seed (-screen-top). */
export const SCREEN_TOP = 10;
/** How many of the top candidates -stability-seeds runs again. */
export const STABILITY_TOP = 3;

const CHOOSE_ONLY_FLAGS = [
  ...MEASURE_RUN_FLAGS,
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
  ...MEASURE_SEED_FLAGS,
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
  CANDIDATES_FLAG,
  {
    name: "list",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print the grid of candidates and the simulations it costs, and exit",
  },
  JSON_FLAG,
  outFlag("choose"),
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

export interface ChooseOptions extends MeasureOptions<ChooseOwnValues> {
  readonly validateOutageMs: number;
  /** The extra seeds the top candidates run on for the stability count. */
  readonly stabilitySeeds: readonly number[];
  /** -validate's service of the user's (-target), not started yet; undefined: ./server. */
  readonly target: TargetService | undefined;
}

export type ChooseParse = { readonly kind: "help"; readonly text: string } | { readonly kind: "run"; readonly options: ChooseOptions };

export function parseChooseArgs(argv: readonly string[]): ChooseParse {
  const parsed = parseFlags(CHOOSE_PROGRAM, argv);
  if (parsed.kind === "help") return parsed;
  const own = parsed.values as unknown as ChooseOwnValues;
  const system = systemValues(own);
  const schedules = measureSchedules(own, system);
  if (schedules !== undefined && own.validate) {
    throw new UsageError("-validate re-runs stops with the real programs: it does not combine with -faults");
  }
  const target = validationTarget(own);
  const measure = measureOptionsFrom(own, system, schedules);
  const outagesMs = measure.outagesMs;
  return {
    kind: "run",
    options: {
      ...measure,
      stabilitySeeds: Array.from({ length: own["stability-seeds"] }, (_, index) => own.seed + own.seeds + index),
      validateOutageMs: own["validate-outage"] ?? outagesMs[Math.floor((outagesMs.length - 1) / 2)]!,
      target,
    },
  };
}

/** -target's service for -validate, checked now: -validate stops it, so it needs its command or its pid. */
function validationTarget(own: ChooseOwnValues): TargetService | undefined {
  if (own.target !== "" && !own.validate) throw new UsageError("-target runs -validate's experiment on your service: it needs -validate");
  const target = targetOf(own, [], false, false);
  if (target !== undefined && own["server-side"])
    throw new UsageError("-server-side ranks ./server's levers, which your service does not have: -target ranks client policies only");
  if (target !== undefined && target.control.kind === "none")
    throw new UsageError("-validate stops your service (SIGSTOP, SIGCONT): -target needs -target-cmd or -target-pid");
  return target;
}

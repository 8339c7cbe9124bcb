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
  type MeasureOwnValues,
  outFlag,
  SYSTEM_FLAGS,
  systemValues,
} from "./measure.ts";
import type { ScenarioTarget } from "./scenario-target.ts";

const CHECK_ONLY_FLAGS = [
  {
    name: "format",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "name",
    description: "the configuration's format, when check should not tell it from the file (-h lists them)",
  },
  {
    name: "policy",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "name",
    description: "grade only this policy of the file (its name as check prints it, or its number from 1); default: every one",
  },
  {
    name: "from",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "files",
    description:
      "your system from the load tests you already ran, as probe -from fits them (instead of a scenario file): autocannon, k6, " +
      "vegeta, wrk or wrk2, or a CSV, files separated by commas",
  },
  {
    name: "rewrites",
    group: "run",
    kind: "integer",
    default: 5,
    min: 0,
    max: 20,
    placeholder: "n",
    description: "how many of choose's qualifying candidates are written into your file and simulated as the file then says them",
  },
] as const satisfies readonly FlagSpec[];

/** choose's system and measure (src/options/measure.ts): a policy is graded as choose grades its candidates. */
export const CHECK_FLAGS: readonly FlagSpec[] = [
  ...SYSTEM_FLAGS,
  ...MEASURE_RUN_FLAGS,
  ...MEASURE_SEED_FLAGS,
  CANDIDATES_FLAG,
  JSON_FLAG,
  outFlag("check"),
  DEBUG_FLAG,
  ...CHECK_ONLY_FLAGS,
];

export type CheckOwnValues = FlagValues<typeof CHECK_ONLY_FLAGS>;

/** The system, the measure and check's own values. */
export type CheckOptions = MeasureOptions<MeasureOwnValues & CheckOwnValues>;

export type CheckParse = { readonly kind: "help"; readonly text: string } | { readonly kind: "run"; readonly options: CheckOptions };

export function parseCheckArgs(argv: readonly string[], program: ProgramDescription<readonly FlagSpec[]>): CheckParse {
  const parsed = parseFlags(program, argv);
  if (parsed.kind === "help") return parsed;
  const own = parsed.values as unknown as MeasureOwnValues & CheckOwnValues;
  const system = systemValues(own);
  return { kind: "run", options: measureOptionsFrom(own, system, measureSchedules(own, system)) };
}

/** The scenario file's keys are choose's: a system and how to grade on it. */
export const CHECK_TARGET: ScenarioTarget = { program: "choose", flags: CHECK_FLAGS };

export function checkProgram(formatsHelp: string): ProgramDescription<readonly FlagSpec[]> {
  return {
    name: "check",
    summary:
      "Grades the retry configuration you run, in its own format, on your system: every field mapped onto the\n" +
      "strategies and protections the simulator models (and every field it does not model, named), then the policy\n" +
      "run as choose runs its candidates: success within the SLO, the retried requests' p99, amplification, the\n" +
      "longest outage survived. When it does not qualify, the smallest change to your file that does, as a diff.\n" +
      "Describe your system with a scenario file (from probe) or with choose's flags.",
    flags: CHECK_FLAGS,
    arguments: "CONFIG [scenario.yaml]",
    epilog: `Formats:\n${formatsHelp}`,
  };
}

/** The configuration file: the first argument, before the scenario file and the flags. */
export function splitConfigArgument(argv: readonly string[]): { readonly config: string | undefined; readonly rest: readonly string[] } {
  const first = argv[0];
  if (first === undefined || first.startsWith("-")) {
    if (argv.some((arg) => /^--?(h|help)$/.test(arg))) return { config: undefined, rest: argv };
    throw new UsageError("name the configuration file first: check CONFIG [scenario.yaml] [flags]");
  }
  return { config: first, rest: argv.slice(1) };
}

/**
 * -from FILES taken out of the arguments (any spelling Go's flag package accepts: -from x, --from x,
 * -from=x): check hands it to probe -from before it reads a scenario file.
 */
export function takeFrom(argv: readonly string[]): { readonly from: string | undefined; readonly rest: readonly string[] } {
  const rest: string[] = [];
  let from: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const match = /^--?from(?:=(.*))?$/.exec(arg);
    if (match === null) {
      rest.push(arg);
      continue;
    }
    const value = match[1] ?? argv[++index];
    if (value === undefined || value === "") throw new UsageError("flag needs an argument: -from");
    if (from !== undefined) throw new UsageError("-from is given twice: list every load test in one -from, separated by commas");
    from = value;
  }
  return { from, rest };
}

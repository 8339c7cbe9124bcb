import { DEBUG_FLAG, type FlagSpec, type FlagValues, type ProgramDescription } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { OCC_WORKLOAD_FLAG } from "../cli/workload.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "./scenario-target.ts";
import { blogRunsHelp, parseBlogRuns } from "../strategies/blog-backoff.ts";
import type { OccRun } from "../config/occ-run.ts";
import { BLOG_BACKOFF_FLAGS, blogStrategiesFlag, NETWORK_DELAY_FLAGS } from "../strategies/occ-flags.ts";
import { SIM_SEED_FLAG } from "../config/simulation.ts";

/*
 * The flag table of `./sim -workload occ` (a scenario file with `workload: occ` is read against it),
 * and its reading into the runner's OccRun.
 */

/** The blog's figures sweep 10 to 190 clients in steps of 10. */
const BLOG_SWEEP = "10:190:10";
const MAX_OCC_CLIENTS = 100_000;

export const OCC_SIM_FLAGS = [
  OCC_WORKLOAD_FLAG,
  {
    name: "clients",
    group: "system",
    kind: "integer",
    default: 100,
    min: 1,
    max: MAX_OCC_CLIENTS,
    placeholder: "n",
    description: "clients, each updating the row once",
  },
  {
    name: "sweep-clients",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "list",
    description: `client counts to sweep instead of -clients: a comma list, from:to:step, or 'blog' for the blog's ${BLOG_SWEEP}`,
    check: (text) => clientCountsProblem(text),
  },
  blogStrategiesFlag("strategies", "all", "the policies to compare"),
  ...BLOG_BACKOFF_FLAGS,
  ...NETWORK_DELAY_FLAGS,
  {
    name: "trials",
    group: "run",
    kind: "integer",
    default: 100,
    min: 1,
    max: 100_000,
    placeholder: "n",
    description: "independent runs averaged per figure (the blog's simulator averages 100)",
  },
  { ...SIM_SEED_FLAG, description: "random seed: run t uses seed + t; the same flags and seed give the same figures" },
  { name: "json", group: "output", kind: "boolean", default: false, description: "print one JSON line per strategy and client count" },
  PRINT_SCENARIO_FLAG,
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const OCC_SIM_PROGRAM: ProgramDescription<typeof OCC_SIM_FLAGS> = {
  name: "sim -workload occ",
  summary:
    'The AWS Architecture Blog\'s "Exponential Backoff And Jitter" (Marc Brooker, 2015) in virtual time: N clients each\n' +
    "read one versioned row and write it back against the version read; a write lands only if no other landed since\n" +
    "(else 412), and the client backs off and starts over. Figures: work (writes tried, the blog's calls; calls counts\n" +
    "reads too) and the time until every client's write landed, as in github.com/aws-samples/aws-arch-backoff-simulator.",
  flags: OCC_SIM_FLAGS,
  arguments: SCENARIO_ARGUMENT,
  epilog: `The blog's policies, as strategies of the registry (with -base 5ms -cap 2s):\n${blogRunsHelp()}`,
};

/** `10,20,50`, `10:190:10` or `blog` as client counts; throws a UsageError. */
export function parseClientCounts(text: string): number[] {
  const range = /^(\d+):(\d+):(\d+)$/.exec(text === "blog" ? BLOG_SWEEP : text.trim());
  const counts =
    range === null
      ? text.split(",").map((part) => (/^\s*\d+\s*$/.test(part) ? Number(part) : Number.NaN))
      : countsBetween(Number(range[1]), Number(range[2]), Number(range[3]));
  if (counts.length === 0 || counts.some((count) => !Number.isInteger(count) || count < 1 || count > MAX_OCC_CLIENTS))
    throw new UsageError(
      `invalid value "${text}" for flag -sweep-clients: must be client counts from 1 to ${MAX_OCC_CLIENTS}: 10,50,100, 10:190:10 or blog`,
    );
  return counts;
}

function countsBetween(from: number, to: number, step: number): number[] {
  if (step < 1 || to < from) return [];
  return Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, index) => from + index * step);
}

function clientCountsProblem(text: string): string | undefined {
  try {
    parseClientCounts(text);
    return undefined;
  } catch (error) {
    if (error instanceof UsageError) return error.message.replace(/^.*: must/, "must");
    throw error;
  }
}

/** `./sim -workload occ` as a reader of scenario files. */
export const OCC_SIM_TARGET: ScenarioTarget = { program: "sim", workload: "occ", flags: OCC_SIM_FLAGS };

/** What the flags of `./sim -workload occ` ask to run. */
export function occRun(values: FlagValues<typeof OCC_SIM_FLAGS>): OccRun {
  return {
    runs: parseBlogRuns(values.strategies),
    counts: values["sweep-clients"] === undefined ? [values.clients] : parseClientCounts(values["sweep-clients"]),
    settings: {
      baseMs: values.base,
      capMs: values.cap,
      network: { meanMs: values["net-delay"], sdMs: values["net-delay-sd"] },
      trials: values.trials,
      seed: values.seed,
    },
  };
}

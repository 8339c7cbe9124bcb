import { formatDuration } from "../cli/duration.ts";
import { type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { refusalOf, UsageError } from "../cli/usage-error.ts";
import { WORKLOAD_HELP } from "../cli/workload.ts";
import {
  type FaultChecks,
  MAX_CLIENTS,
  MAX_REPORTS,
  MIN_CYCLE_MS,
  PARALLEL_FLAG,
  resolveSimulation,
  SIMULATION_FLAGS,
  type SimulatedRun,
  simulationConfigFrom,
} from "../config/simulation.ts";
import type { SimulationConfig } from "../config/simulation-config.ts";
import { DASHBOARD_FLAGS, SPEED_FLAG } from "../dashboard/options.ts";
import { IMMEDIATE_ANSWER_MS } from "../runner/network.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "./scenario-target.ts";
import { presetsHelp, RUN_CHOICES_HELP, strategyListProblem } from "../strategies/registry.ts";

/*
 * ./sim's flags: a simulated run's (src/config/simulation.ts, which choose, check and the demo
 * read too) and its own, what it runs (-strategies, -sweep, -find-critical-outage) and prints.
 */

/** Parameters a sweep can vary, each a flag of the simulator. */
export const SWEEPABLE = ["outage", "clients", "lambda", "timeout", "backlog", "limit", "baseDelay", "simple-backoff-delay"] as const;

const SIM_ONLY_FLAGS = [
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

/** A simulated run's flags (src/config/simulation.ts), then ./sim's own: what it runs and prints. */
export const SIM_FLAGS = [...SIMULATION_FLAGS, ...SIM_ONLY_FLAGS];

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

export function parseSimArgs(args: readonly string[]) {
  return parseFlags(SIM_PROGRAM, args);
}

export function parseSweep(text: string): { param: (typeof SWEEPABLE)[number]; values: string[] } {
  const match = /^([a-zA-Z-]+)=(.+)$/.exec(text);
  if (match === null) throw new UsageError("must be param=value,value,…");
  const param = match[1] as (typeof SWEEPABLE)[number];
  if (!SWEEPABLE.includes(param)) throw new UsageError(`cannot sweep ${match[1]}; one of ${SWEEPABLE.join(", ")}`);
  return { param, values: match[2]!.split(",").map((value) => value.trim()) };
}

function sweepProblem(text: string): string | undefined {
  return refusalOf(() => parseSweep(text), UsageError);
}

/**
 * A simulated run's faults checked against what ./sim runs with them: -sweep outage=… varies
 * -outage, which -faults replaces, and -find-critical-outage varies one fault's length.
 */
function runChoiceChecks(values: SimFlagValues): FaultChecks {
  return {
    given: () => {
      if (values.sweep !== undefined && parseSweep(values.sweep).param === "outage") {
        throw new UsageError("-faults does not combine with -sweep outage=…, which varies -outage");
      }
    },
    read: (faults) => {
      if (values["find-critical-outage"] && faults.length !== 1) {
        throw new UsageError(`-find-critical-outage varies the length of one fault: -faults lists ${faults.length}`);
      }
    },
  };
}

/** The run the flags describe, as ./sim runs it. */
export function resolveSimOptions(values: SimFlagValues): SimulatedRun {
  return resolveSimulation(values, runChoiceChecks(values));
}

/** The simulation the flag values describe; a UsageError for values ./sim cannot run. */
export function configFrom(values: SimFlagValues): SimulationConfig {
  return simulationConfigFrom(values, runChoiceChecks(values));
}

import type { BooleanFlag, FlagSpec } from "../cli/flags.ts";
import type { Workload } from "../cli/workload.ts";

/*
 * What a program that reads scenario files declares of itself, for the scenario files
 * (src/scenario-file) to read a file against: its flag table, its workload, the flags it
 * passes on to the programs it starts.
 */

/** Every program that takes a file has it. */
export const PRINT_SCENARIO_FLAG = {
  name: "print-scenario",
  group: "output",
  kind: "boolean",
  default: false,
  description: "print the scenario file that the other flags (and any file given) mean, and exit",
} as const satisfies BooleanFlag;

/** How usage names the file. */
export const SCENARIO_ARGUMENT = "[scenario.yaml]";

/**
 * Another program's flags that a program carries in one string flag of its own: the demo
 * passes ./server's flags in -server-args and ./client's in -client-args.
 */
export interface PassThrough {
  /** The carrying flag, e.g. "server-args". */
  readonly flag: string;
  /** The flags it may carry. */
  readonly flags: readonly FlagSpec[];
}

/** A program that reads scenario files: its flag table, and what it passes through. */
export interface ScenarioTarget {
  readonly program: string;
  /** The workload whose flags these are; `requests` when absent. */
  readonly workload?: Workload;
  readonly flags: readonly FlagSpec[];
  readonly passThrough?: readonly PassThrough[];
}

/** The workload a target's flags belong to. */
export const workloadOf = (target: ScenarioTarget): Workload => target.workload ?? "requests";

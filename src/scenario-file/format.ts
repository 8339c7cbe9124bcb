import type { FlagSpec } from "../cli/flags.ts";
import type { Workload } from "../cli/workload.ts";
import type { ScenarioSource } from "../report/html.ts";
import type { ScenarioTier } from "./tiers.ts";

/*
 * The scenario file's shape, without the YAML parser or the validator, so a program that is
 * given no file loads neither (docs/scenario-files.md). A file's sections are the flag groups
 * of src/cli/flags.ts, with `faults` on its own as a list; output flags stay on the command line.
 */

/** The format version a file names in `scenario:`. */
export const SCENARIO_VERSION = 1;

/** The sections that hold flags, in the order -print-scenario writes them. */
export const SCENARIO_SECTIONS = ["system", "strategy", "protection", "faults", "observation", "run"] as const;
export type ScenarioSection = (typeof SCENARIO_SECTIONS)[number];

/**
 * The top-level key that picks the workload (the -workload flag): each workload has its own flag
 * table, so a file's sections are read against the one it names; without it, `requests`.
 */
export const WORKLOAD_KEY = "workload";

/** The flag that is a section of its own, a list: the fault schedule. */
export const FAULTS_KEY = "faults";

/** Where a flag goes in a file; undefined for an output flag, which a file does not hold. */
export function sectionOf(flag: FlagSpec): ScenarioSection | undefined {
  if (flag.name === FAULTS_KEY) return "faults";
  return flag.group === "output" ? undefined : flag.group;
}

/** What a file says about itself: none of it changes a run. */
export interface ScenarioMetadata {
  readonly name?: string;
  readonly description?: string;
  readonly source?: { readonly title?: string | undefined; readonly url?: string | undefined; readonly date?: string | undefined };
  /** The published outcome the scenario reproduces, in words and numbers. */
  readonly published?: string;
  /** What probe measured past saturation: a record, read by no run as a flag; a file written by hand may leave keys out. */
  readonly measured?: Partial<MeasuredPastSaturation>;
}

/**
 * What probe measured of a service past its saturation (docs/probe.md, "Past saturation"): its
 * capacity and baseline, the fates of open-loop arrivals above capacity (counts), what it held,
 * the time back to baseline after them ("none": not within the probe's wait), and the share of
 * the work its clients abandoned that it still served (absent: too little waited to tell).
 */
export interface MeasuredPastSaturation {
  readonly date: string;
  /** Req/s. */
  readonly capacity: number;
  readonly "baseline-p50": string;
  /** Req/s. */
  readonly "overload-rate": number;
  readonly "overload-requests": number;
  readonly served: number;
  readonly shed: number;
  readonly errors: number;
  readonly "held-past-timeout": number;
  readonly "connect-timeout": number;
  readonly refused: number;
  readonly reset: number;
  /** Requests the probe's own machine could not send (no port, no descriptor): not the service's doing. */
  readonly "probe-limit": number;
  readonly "held-at-most": number;
  readonly "held-at-excess"?: number | undefined;
  readonly recovery: string;
  readonly "work-for-nobody"?: number | undefined;
}

/** What a file means to one program. */
export interface LoadedScenario extends ScenarioSource {
  /** Flag tokens (`-name=value`) that go before the command line's own. */
  readonly tokens: readonly string[];
  /** Per carrying flag (demo's "server-args"), the tokens it passes before the command line's. */
  readonly passThrough: Readonly<Record<string, readonly string[]>>;
  /** Keys of the file that another program takes and this one does not, e.g. "run.sweep". */
  readonly ignored: readonly string[];
  /** The line of each flag's key in the file (faults: the line of faults:), for a mistake found once the flags are read together. */
  readonly keyLines?: Readonly<Record<string, number>>;
  readonly metadata: ScenarioMetadata;
  /** The file's workload: the program runs it whatever its command line's default. */
  readonly workload: Workload;
  /** The file's chain of tiers (`tiers:`), the edge first; undefined for one server. */
  readonly tiers?: readonly ScenarioTier[];
}

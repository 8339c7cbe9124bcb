import type { FlagSpec } from "../cli/flags.ts";
import { DEFAULT_PHASES } from "../model/experiment-phases.ts";

type Phase = "steady" | "outage" | "observe";

/**
 * The flag of one of the crash experiment's phases (-steady, -outage, -observe), with its default
 * from DEFAULT_PHASES: the demo's and the measure's (choose, check) are the same flag, each program
 * saying in its own words what the phase is to it.
 */
export const phaseFlag = <Name extends Phase>(name: Name, description: string) =>
  ({
    name,
    group: "run",
    kind: "duration",
    default: DEFAULT_PHASES[`${name}Ms`],
    minMs: 0,
    minExclusive: true,
    description,
  }) as const satisfies FlagSpec;

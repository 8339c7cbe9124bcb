import type { FlagSpec } from "../cli/flags.ts";
import { parseSpeed } from "./playback.ts";

/** The flags of the live dashboard, shared by the demo and the simulator. */
export const DASHBOARD_FLAGS = [
  {
    name: "dashboard",
    group: "output",
    kind: "boolean",
    default: false,
    description: "serve a live dashboard on 127.0.0.1 and print its URL",
  },
  {
    name: "dashboard-port",
    group: "output",
    kind: "integer",
    default: 0,
    min: 0,
    max: 65_535,
    placeholder: "port",
    description: "the dashboard's port (0: any free port)",
  },
  {
    name: "open",
    group: "output",
    kind: "boolean",
    default: false,
    description: "with -dashboard: also open it in a browser, where there is one",
  },
] as const satisfies readonly FlagSpec[];

/** The simulator's playback speed on the dashboard. */
export const SPEED_FLAG = {
  name: "speed",
  group: "output",
  kind: "string",
  default: "1x",
  placeholder: "factor",
  description: "with -dashboard: play the simulated run back this many times faster than real time, e.g. 10x",
  check: (value: string) => (parseSpeed(value) === undefined ? "must be a positive factor such as 10x, 1x or 0.5x" : undefined),
} as const satisfies FlagSpec;

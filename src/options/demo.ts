import { DEBUG_FLAG, type FlagSpec, type ProgramDescription, withoutFlags } from "../cli/flags.ts";
import { CLIENT_FLAGS } from "./client.ts";
import { SERVER_FLAGS } from "./server.ts";
import { PRINT_SCENARIO_FLAG, SCENARIO_ARGUMENT, type ScenarioTarget } from "./scenario-target.ts";
import { phaseFlag } from "../config/phase-flags.ts";
import { DASHBOARD_FLAGS } from "../dashboard/options.ts";
import { FAULTS_HELP, faultsProblem } from "../config/simulation.ts";
import { TARGET_FLAGS } from "../runtime/target-run.ts";
import { presetsHelp, RUN_CHOICES_HELP, strategyListProblem } from "../strategies/registry.ts";

const DEFAULT_STRATEGIES = "fixed,exponential-backoff";

export const DEMO_FLAGS = [
  {
    name: "strategies",
    group: "run",
    kind: "string",
    default: DEFAULT_STRATEGIES,
    placeholder: "list",
    description: `comma-separated strategies and presets to compare: ${RUN_CHOICES_HELP}`,
    check: strategyListProblem,
  },
  phaseFlag("steady", "steady state before the outage"),
  phaseFlag("outage", "how long the server stays stopped (SIGSTOP)"),
  phaseFlag(
    "observe",
    "observation after resuming it (SIGCONT); clients using the reference backoff need 45-85 s to come back (./sim, seeds 1-20)",
  ),
  {
    name: "faults",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "schedule",
    description:
      `${FAULTS_HELP}; times from the steady state's start, as in ./sim; replaces -steady and -outage (the one stop), ` +
      "and -observe starts at the last fault's end. In the real programs: stop is SIGSTOP/SIGCONT, crash kills the server's " +
      "process group and starts it again on the same port, capacity/slow/errors go through the server's fault control " +
      "(-admin-listen), spike starts extra client processes for its length (docs/faults.md)",
    check: faultsProblem,
  },
  {
    name: "server-args",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "flags",
    description: 'flags passed to ./server, e.g. "-backlog 1024"',
  },
  ...TARGET_FLAGS,
  {
    name: "client-args",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "flags",
    description: 'flags passed to ./client, e.g. "-clients 500 -timeout 1s"',
  },
  {
    name: "out",
    group: "output",
    kind: "string",
    default: "results",
    placeholder: "dir",
    description: "where results/<timestamp>/ is written",
  },
  ...DASHBOARD_FLAGS,
  PRINT_SCENARIO_FLAG,
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const DEMO_PROGRAM: ProgramDescription<typeof DEMO_FLAGS> = {
  name: "demo",
  summary:
    "The crash experiment, by itself: for each strategy start ./server and ./client, SIGSTOP the server,\n" +
    "SIGCONT it, observe, and report with charts (results/<timestamp>/report.html).",
  flags: DEMO_FLAGS,
  arguments: SCENARIO_ARGUMENT,
  epilog: `Presets (-strategies takes them beside the strategies; each stands for the client flags shown):\n${presetsHelp()}`,
};

/** Flags the demo sets itself: passed through, they would point the programs elsewhere or mislabel a run. */
export const RESERVED_SERVER_FLAGS = {
  listen: "the demo listens on a free loopback port",
  json: "the demo reads JSON",
  "admin-listen": "the demo opens the fault control itself when -faults needs it",
};
export const RESERVED_CLIENT_FLAGS = {
  url: "the demo points the client at its server",
  json: "the demo reads JSON",
  strategy: "choose strategies with -strategies",
  "exponential-backoff": "choose strategies with -strategies",
  duration: "the demo stops the client itself",
  "start-at": "the demo anchors the client's windows on the run's start",
};

/** A scenario file's server and client flags reach the programs through -server-args and -client-args. */
export const DEMO_TARGET: ScenarioTarget = {
  program: "demo",
  flags: DEMO_FLAGS,
  passThrough: [
    {
      flag: "server-args",
      flags: withoutFlags(SERVER_FLAGS, Object.keys(RESERVED_SERVER_FLAGS) as (keyof typeof RESERVED_SERVER_FLAGS)[]),
    },
    {
      flag: "client-args",
      flags: withoutFlags(CLIENT_FLAGS, Object.keys(RESERVED_CLIENT_FLAGS) as (keyof typeof RESERVED_CLIENT_FLAGS)[]),
    },
  ],
};

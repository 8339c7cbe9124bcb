import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ProgramDescription } from "../cli/flags.ts";
import { redactCredentials } from "../cli/redact-url.ts";
import { UsageError } from "../cli/usage-error.ts";
import { isLoopback } from "../cli/loopback.ts";
import { checkUrl } from "../cli/url.ts";
import { LOAD_CONFIG_FLAGS } from "../config/load.ts";
import { MAX_BODY_FLAG } from "../runtime/http-body.ts";

/** The user's load, as the client's flags state it. */
export type ProbeLoad =
  { readonly arrivals: "closed"; readonly clients: number; readonly lambda: number } | { readonly arrivals: "open"; readonly rate: number };

/** The client's flag of that name, as it is (the probe writes the user's load into the scenario). */
function clientFlag<N extends "clients" | "lambda" | "timeout" | "arrivals" | "rate">(
  name: N,
): Extract<(typeof LOAD_CONFIG_FLAGS)[number], { name: N }> {
  return LOAD_CONFIG_FLAGS.find((flag) => flag.name === name) as Extract<(typeof LOAD_CONFIG_FLAGS)[number], { name: N }>;
}

const stepsProblem = (text: string) =>
  text.split(",").every((part) => /^\s*[1-9]\d*\s*$/.test(part)) ? undefined : "must be a comma-separated list of positive integers";

export const PROBE_FLAGS = [
  { ...clientFlag("timeout"), description: "timeout on an HTTP request (the probe's and, in -out's scenario, your clients')" },
  { ...clientFlag("clients"), description: "for -out: your clients, as ./client and ./sim count them" },
  { ...clientFlag("lambda"), description: "for -out: mean seconds between one of your clients' requests" },
  { ...clientFlag("arrivals"), description: "for -out: closed (-clients, -lambda) or open (-rate) arrivals of your load" },
  { ...clientFlag("rate"), description: "for -out with -arrivals open: your requests per second" },
  {
    name: "from",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "files",
    description:
      "fit load tests you already ran instead of probing a URL, files separated by commas: autocannon --json, " +
      "k6 --summary-export, vegeta report -type=json, wrk or wrk2 output, or a CSV (concurrency, throughput, latency …)",
  },
  {
    name: "steps",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "list",
    description: "concurrencies to step through, e.g. 1,2,4,8 (empty: 1, 2, 4, … up to -max-concurrency)",
    check: stepsProblem,
  },
  {
    name: "max-concurrency",
    group: "run",
    kind: "integer",
    default: 256,
    min: 1,
    max: 10_000,
    placeholder: "n",
    description: "highest concurrency the default steps reach",
  },
  {
    name: "step-duration",
    group: "run",
    kind: "duration",
    default: 2_000,
    minMs: 0,
    minExclusive: true,
    description: "each step measures at least this long …",
  },
  {
    name: "step-requests",
    group: "run",
    kind: "integer",
    default: 200,
    min: 2,
    placeholder: "n",
    description: "… and until this many answers (at most 4 × -step-duration)",
  },
  {
    name: "max-requests",
    group: "run",
    kind: "integer",
    default: 100_000,
    min: 1,
    // A step keeps each answer's latency: 80 MB at most.
    max: 10_000_000,
    placeholder: "n",
    description: "hard limit: requests the whole probe sends",
  },
  {
    name: "max-rate",
    group: "run",
    kind: "number",
    default: 5_000,
    min: 0,
    minExclusive: true,
    // The rate window keeps one instant per request it allows in a second; one probe process sends far less.
    max: 100_000,
    placeholder: "per-second",
    description: "hard limit: requests per second the probe sends",
  },
  {
    name: "max-time",
    group: "run",
    kind: "duration",
    default: 120_000,
    minMs: 0,
    minExclusive: true,
    description:
      "hard limit: how long the probe's steps send (each of -validate's measures of ./server has as long again; the phase past saturation has its -overload- limits)",
  },
  MAX_BODY_FLAG,
  {
    name: "min-growth",
    group: "run",
    kind: "number",
    default: 0.1,
    min: 0,
    placeholder: "fraction",
    description: "saturated once a step's throughput grows by no more than this over the best before it",
  },
  {
    name: "max-p99",
    group: "run",
    kind: "duration",
    default: undefined,
    minMs: 0,
    minExclusive: true,
    description: "saturated once a step's p99 latency passes this (default: -timeout)",
  },
  {
    name: "max-errors",
    group: "run",
    kind: "number",
    default: 0.05,
    min: 0,
    max: 1,
    placeholder: "fraction",
    description: "saturated once a step's errors pass this share of its answers",
  },
  {
    name: "i-own-this-service",
    group: "run",
    kind: "boolean",
    default: false,
    description: "allow a target outside this machine's loopback: the probe loads it to saturation, so only a service you own",
  },
  {
    name: "no-overload",
    group: "run",
    kind: "boolean",
    default: false,
    description:
      "skip the phase past saturation (open-loop arrivals above capacity, a burst its clients abandon, the time back to baseline)",
  },
  {
    name: "overload-factor",
    group: "run",
    kind: "number",
    default: 3,
    min: 1,
    minExclusive: true,
    max: 100,
    placeholder: "k",
    description: "overload phase: arrivals at k times the measured capacity (within -max-rate)",
  },
  {
    name: "overload-time",
    group: "run",
    kind: "duration",
    default: 3_000,
    minMs: 0,
    minExclusive: true,
    maxMs: 60_000,
    description: "overload phase: how long the arrivals last",
  },
  {
    name: "overload-max-requests",
    group: "run",
    kind: "integer",
    default: 10_000,
    min: 1,
    max: 1_000_000,
    placeholder: "n",
    description: "overload phase: hard limit on all its requests (and within what the steps left of -max-requests)",
  },
  {
    name: "overload-settle",
    group: "run",
    kind: "duration",
    default: 60_000,
    minMs: 0,
    minExclusive: true,
    maxMs: 600_000,
    description: "overload phase: the longest wait for the service to come back to its baseline, after the arrivals and after the burst",
  },
  {
    name: "validate",
    group: "run",
    kind: "boolean",
    default: false,
    description: "start ./server with the fitted model, probe it the same way, and print measured vs model",
  },
  {
    name: "out",
    group: "output",
    kind: "string",
    default: "",
    placeholder: "file",
    description: "write the scenario file (the fitted system, your timeout and load) for ./sim and choose",
  },
  {
    name: "report",
    group: "output",
    kind: "string",
    default: "",
    placeholder: "file",
    description: "write an HTML report with the steps and the fitted curves",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const PROBE_PROGRAM: ProgramDescription<typeof PROBE_FLAGS> = {
  name: "probe",
  summary:
    "Measures a running HTTP service in closed-loop steps of rising concurrency until it saturates, fits the server models\n" +
    "(queue, linear, exponential) to its latency and throughput, then measures what it does past saturation (open-loop\n" +
    "arrivals above capacity: what it holds, what it turns away and how, whether it serves clients that left, how long\n" +
    "it takes to come back), and writes the scenario file that ./sim and choose read.\n" +
    "With -from it fits the load tests you already ran instead, and sends nothing.",
  flags: PROBE_FLAGS,
  arguments: "URL",
};

export interface ProbeOptions {
  /** The service to probe; undefined with -from, whose files are fitted instead. */
  readonly url: URL | undefined;
  /** -from's files, in the order given; empty when a URL is probed. */
  readonly from: readonly string[];
  readonly values: FlagValues<typeof PROBE_FLAGS>;
  readonly steps: readonly number[];
  readonly maxP99Ms: number;
  readonly load: ProbeLoad;
}

export type ParsedProbeArgs = { readonly kind: "help"; readonly text: string } | { readonly kind: "run"; readonly options: ProbeOptions };

export function parseProbeArgs(argv: readonly string[]): ParsedProbeArgs {
  const parsed = parseFlags(PROBE_PROGRAM, argv);
  if (parsed.kind === "help") return parsed;
  const { values, args } = parsed;
  const from = values.from === "" ? [] : values.from.split(",").map((file) => file.trim());
  if (from.some((file) => file === "")) throw new UsageError(`-from "${values.from}": an empty file name`);
  if (from.length > 0 && args.length > 0) throw new UsageError("-from fits files instead of probing: give no URL with it");
  if (from.length > 0 && values.validate) throw new UsageError("-validate probes ./server the way a URL was probed: not with -from");
  const load = loadOf(values);
  if (from.length > 0) return { kind: "run", options: { url: undefined, from, values, steps: [], maxP99Ms: values.timeout, load } };
  if (args.length !== 1)
    throw new UsageError(`needs one URL to probe, e.g. http://127.0.0.1:8080/api, or -from files (got ${args.length} arguments)`);
  const problem = checkUrl(args[0]!);
  if (problem !== undefined) throw new UsageError(`${JSON.stringify(redactCredentials(args[0]!))}: ${problem}`);
  const url = new URL(args[0]!);
  if (!isLoopback(url.hostname) && !values["i-own-this-service"]) {
    throw new UsageError(
      `${url.host} is not this machine's loopback; probing loads a service to saturation: add -i-own-this-service if it is yours`,
    );
  }
  const steps =
    values.steps === ""
      ? Array.from({ length: Math.floor(Math.log2(values["max-concurrency"])) + 1 }, (_, index) => 2 ** index)
      : values.steps.split(",").map((part) => Number(part.trim()));
  return { kind: "run", options: { url, from, values, steps, maxP99Ms: values["max-p99"] ?? values.timeout, load } };
}

/** The user's load for -out's scenario, as the client's flags give it. */
function loadOf(values: FlagValues<typeof PROBE_FLAGS>): ProbeLoad {
  if (values.arrivals === "open" && values.rate === undefined) throw new UsageError("-arrivals open needs -rate");
  if (values.arrivals !== "open" && values.rate !== undefined) throw new UsageError("-rate needs -arrivals open");
  return values.arrivals === "open"
    ? { arrivals: "open", rate: values.rate! }
    : { arrivals: "closed", clients: values.clients, lambda: values.lambda };
}

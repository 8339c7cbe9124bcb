import { availableParallelism } from "node:os";
import { WORKLOAD_HELP } from "../cli/workload.ts";
import { workersFlag } from "../cli/workers-flag.ts";
import {
  DEBUG_FLAG,
  type FlagSpec,
  type FlagValues,
  parseFlags,
  type ParseOutcome,
  type ProgramDescription,
  withoutFlags,
} from "../cli/flags.ts";
import { type ListenAddress, listenAddressProblem, parseListenAddress } from "../cli/listen-address.ts";
import type { LatencyModel } from "../model/latency.ts";
import type { ServerModelFigures } from "../model/servers/figures.ts";
import { modelFigures, modelOf, type ServerModelSpec } from "../model/servers/models.ts";
import { MODEL_FLAGS, resolveServerModel } from "../model/servers/model-flags.ts";
import { DEADLINE_HEADER, retryAfterSeconds } from "../model/protection-headers.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import { adminListenProblem } from "./admin-listen.ts";
import { UsageError } from "../cli/usage-error.ts";
import { resolveUpstream, UPSTREAM_FLAGS, type UpstreamOptions } from "./upstream-flags.ts";

// The server model's one-line description, for the programs that state it (./sim too).
export { describeModel } from "../model/servers/model-flags.ts";

/** The largest -max-in-service: the simulator stores each request in service in about 25 bytes. */
export const MAX_IN_SERVICE_CEILING = 10_000_000;

/**
 * Node's own headers timeout is off when the request timeout is (requests here may stay in
 * service for hours), so the server sets one itself: without it, connections that never
 * finish their request head (slowloris) would hold descriptors for ever.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** How a shed request is turned away: answered 503 at once, or dropped unanswered (a full accept queue's SYN drop). */
export const SHED_WITH = ["503", "drop"] as const;
export type ShedWith = (typeof SHED_WITH)[number];

/** Flags, defaults and help of ./server, in one table; the server model's come first (see model-flags.ts). */
export const SERVER_FLAGS = [
  ...MODEL_FLAGS,
  {
    name: "listen",
    group: "run",
    kind: "string",
    default: "127.0.0.1:8070",
    placeholder: "host:port",
    description: "address to listen on; ':8070' for all interfaces, port 0 for any free port",
    check: listenAddressProblem,
  },
  {
    name: "backlog",
    group: "system",
    kind: "integer",
    default: 4096,
    min: 1,
    max: 1_000_000,
    placeholder: "n",
    description: "listen backlog: connections the kernel queues while the server is stopped (capped by net.core.somaxconn)",
  },
  {
    name: "cancel-on-disconnect",
    group: "system",
    kind: "boolean",
    default: false,
    description: "take a request out of service when its client goes away (the reference keeps it)",
  },
  {
    name: "max-concurrency",
    group: "system",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "n",
    description: "load shedding: answer 503 at once above this many requests in service (0 = off)",
  },
  {
    name: "retry-after",
    group: "system",
    kind: "duration",
    default: 1000,
    minMs: 0,
    description: "server pushback: the Retry-After a shed request's 503 carries, in whole seconds rounded up (0 = no header)",
  },
  {
    name: "shed-with",
    group: "system",
    kind: "string",
    default: "503",
    choices: SHED_WITH,
    placeholder: "answer",
    description:
      "how load shedding (-max-concurrency, -queue-limit) turns a request away: 503 at once, or drop: never answered, as a full " +
      "listen backlog drops a SYN, so its client waits out its timeout",
  },
  {
    name: "deadline-aware",
    group: "system",
    kind: "boolean",
    default: false,
    description: `take a request out of service, answering 504, once the deadline its client sent (${DEADLINE_HEADER}) has passed`,
  },
  {
    name: "error-rate",
    group: "system",
    kind: "number",
    default: 0,
    min: 0,
    max: 1,
    placeholder: "p",
    description: "transient faults: answer this fraction of requests 500 after the modelled delay (seeded by -seed)",
  },
  {
    name: "seed",
    group: "run",
    kind: "integer",
    default: undefined,
    min: 0,
    max: 2 ** 31 - 1,
    placeholder: "n",
    description: "random seed of -error-rate and the queue model's service times (default: random, printed at start)",
  },
  {
    name: "max-in-service",
    group: "system",
    kind: "integer",
    default: DEFAULT_MAX_IN_SERVICE,
    min: 1,
    max: MAX_IN_SERVICE_CEILING,
    placeholder: "n",
    description:
      "memory: requests in service, answered or abandoned, the server can hold; one more and it runs out of memory " +
      "and exits, as V8 stops a Node server whose heap is full (~4.8 KB each: a default 4 GB heap holds ~800000)",
  },
  {
    name: "report-interval",
    group: "observation",
    kind: "duration",
    default: 1000,
    minMs: 0,
    minExclusive: true,
    description: "how often to print the concurrency line",
  },
  {
    name: "headers-timeout",
    group: "system",
    kind: "duration",
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    minMs: 0,
    description: "close a connection that has not sent a complete request head within this time, with 408 (0 = never)",
  },
  {
    name: "admin-listen",
    group: "run",
    kind: "string",
    default: "",
    placeholder: "host:port",
    description:
      "fault control on this loopback address (off by default): PUT /faults with a body such as 'capacity*0.5, slow*3, errors*0.2' " +
      "sets those faults, an empty body lifts them, GET /faults shows them (docs/faults.md)",
    check: adminListenProblem,
  },
  {
    name: "json",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print one JSON object per report instead of the text line",
  },
  {
    name: "metrics",
    group: "output",
    kind: "boolean",
    default: false,
    description: "serve GET /metrics (Prometheus text format) on the same address",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

/** One server over several processes (src/server/workers.ts): a real program's flag, which the simulator has no use for. */
const WORKERS_FLAG = workersFlag(
  256,
  "serve with this many processes sharing the port and one model state: every request's delay follows the whole " +
    "server's concurrency, and the lines report the whole server (auto: one per core; not the queue model, whose threads are one pool)",
);

/**
 * ./server's own table: the server's flags (the simulator and the demo take those), and a
 * middle tier's (-upstream, src/server/upstream-flags.ts), which only a real server runs.
 */
export const SERVER_PROGRAM_FLAGS = [...withoutFlags(SERVER_FLAGS, ["debug"]), ...UPSTREAM_FLAGS, WORKERS_FLAG, DEBUG_FLAG];

export const SERVER_PROGRAM: ProgramDescription<typeof SERVER_PROGRAM_FLAGS> = {
  name: "server",
  summary:
    "An HTTP server whose latency is baseDelay up to a concurrency limit and grows exponentially above it\n" +
    "(or another -model: linear, or queue, a thread pool).\n" +
    "GET /api answers OK after the modelled delay; GET /stats gives a JSON snapshot.\n" +
    "With -upstream URL it is a middle tier: each request calls URL with its own retry policy (-upstream-…).\n" +
    `Another workload: ${WORKLOAD_HELP}.`,
  flags: SERVER_PROGRAM_FLAGS,
};

/**
 * The server itself, as its flags describe it: its model and limits, what it sheds and how, the
 * errors it injects, how often it reports. The simulator takes these too; how ./server runs
 * (where it listens, what it prints, its processes) is ServerOptions' own.
 */
export interface ServerSystem {
  /** The exponential model's curve (its flags always have values). */
  readonly latency: LatencyModel;
  /** The server model (-model); the exponential one with `latency` when absent. */
  readonly model?: ServerModelSpec;
  readonly backlog: number;
  readonly cancelOnDisconnect: boolean;
  /** Infinity when load shedding is off. */
  readonly maxConcurrency: number;
  /** The Retry-After of a shed request, ms, a whole number of seconds (rounded up); 0 for none. */
  readonly retryAfterMs: number;
  /** How a shed request is turned away (-shed-with). */
  readonly shedWith: ShedWith;
  readonly deadlineAware: boolean;
  /** Fraction of requests answered 500 after the modelled delay. */
  readonly errorRate: number;
  /** Requests in service the server's memory holds (-max-in-service); Infinity if omitted. */
  readonly maxInService?: number;
  readonly reportIntervalMs: number;
}

export interface ServerOptions extends ServerSystem {
  readonly listen: ListenAddress;
  /** Seed of the error injection; undefined for a random one. */
  readonly seed: number | undefined;
  /** 0 turns it off. */
  readonly headersTimeoutMs: number;
  readonly json: boolean;
  /** Serve GET /metrics. */
  readonly metrics: boolean;
  /** Where the fault control listens (-admin-listen, loopback); undefined when it is off. */
  readonly adminListen?: ListenAddress | undefined;
  /** A middle tier's upstream and its calls' policy (-upstream); undefined for a server that calls nobody. */
  readonly upstream?: UpstreamOptions | undefined;
  /** Processes serving (-workers); 1 (or absent) for one process. */
  readonly workers?: number;
}

/** ./server's flags that say how the program runs, not what the server is: the simulator has none of them (nor a fault control). */
const SERVER_RUN_FLAG_NAMES = ["listen", "json", "debug", "seed", "metrics", "headers-timeout", "admin-listen"] as const;

/** ./server's flags that describe the server itself (ServerSystem), which the simulator takes too. */
export const SERVER_SYSTEM_FLAGS = withoutFlags(SERVER_FLAGS, SERVER_RUN_FLAG_NAMES);

/** The server the flags describe; a UsageError for a combination that means nothing. */
export function resolveServerSystem(values: FlagValues<typeof SERVER_SYSTEM_FLAGS>): ServerSystem {
  const model = resolveServerModel(values);
  // A model with a queue of its own sheds past its -queue-limit (the queue model: its pool says so).
  const sheds = values["max-concurrency"] !== 0 || (model !== undefined && "pool" in model && Number.isFinite(model.pool.queueLimit));
  if (values["shed-with"] === "drop" && !sheds)
    throw new UsageError("-shed-with drop says how shed requests are turned away: it needs -max-concurrency (or -queue-limit)");
  return {
    model,
    latency: {
      baseDelayMs: values.baseDelay,
      limit: values.limit,
      factor: values.factor,
      exponentDivisor: values.k,
    },
    backlog: values.backlog,
    cancelOnDisconnect: values["cancel-on-disconnect"],
    maxConcurrency: values["max-concurrency"] === 0 ? Infinity : values["max-concurrency"],
    retryAfterMs: retryAfterSeconds(values["retry-after"]) * 1000,
    shedWith: values["shed-with"] as ShedWith, // one of the flag's choices
    deadlineAware: values["deadline-aware"],
    errorRate: values["error-rate"],
    maxInService: values["max-in-service"],
    reportIntervalMs: values["report-interval"],
  };
}

export function resolveServerOptions(values: FlagValues<typeof SERVER_FLAGS>): ServerOptions {
  const listen = parseListenAddress(values.listen);
  if (typeof listen === "string") throw new Error(`unreachable: -listen was checked (${listen})`);
  return {
    ...resolveServerSystem(values),
    listen,
    seed: values.seed,
    headersTimeoutMs: values["headers-timeout"],
    json: values.json,
    metrics: values.metrics,
    adminListen: values["admin-listen"] === "" ? undefined : (parseListenAddress(values["admin-listen"]) as ListenAddress),
  };
}

export function parseServerArgs(args: readonly string[]): ParseOutcome<typeof SERVER_PROGRAM_FLAGS> {
  return parseFlags(SERVER_PROGRAM, args);
}

/** ./server's options: the server's, and a middle tier's upstream. */
export function resolveServerProgramOptions(values: FlagValues<typeof SERVER_PROGRAM_FLAGS>): ServerOptions {
  const options = resolveServerOptions(values);
  const resolved = { ...options, upstream: resolveUpstream(values, serverModelOf(options), options.listen) };
  const workers = values.workers === "auto" ? availableParallelism() : Number(values.workers);
  if (workers > 1) checkWorkersFit(resolved, workers);
  return { ...resolved, workers };
}

/** What one model state over several processes does not do yet: each a usage error, not a server that quietly means something else. */
function checkWorkersFit(options: ServerOptions, workers: number): void {
  const refuse = (what: string) => {
    throw new UsageError(`-workers ${workers}: ${what}; run it with one process (-workers 1)`);
  };
  const spec = serverModelOf(options);
  if (modelOf(spec).sharedDelay === undefined)
    refuse(`the ${spec.kind} model's threads and queue are one pool, which processes do not share`);
  if (options.upstream !== undefined) refuse("a middle tier's calls and their retry budget would be per process");
  if (options.adminListen !== undefined) refuse("the fault control (-admin-listen) would reach one process");
}

/** The server model the options describe. */
export function serverModelOf(options: { readonly model?: ServerModelSpec | undefined; readonly latency: LatencyModel }): ServerModelSpec {
  return options.model ?? { kind: "exponential", latency: options.latency };
}

/**
 * The server does not know its clients' timeout: its figures (capacity, tipping point) are
 * stated for the client's default one.
 */
export const FIGURES_TIMEOUT_MS = 2000;

/** The capacity and tipping point of the options' model, for clients with `timeoutMs`. */
export function serverFigures(
  options: Pick<ServerOptions, "model" | "latency" | "maxConcurrency">,
  timeoutMs = FIGURES_TIMEOUT_MS,
): ServerModelFigures {
  return modelFigures(serverModelOf(options), timeoutMs, options.maxConcurrency);
}

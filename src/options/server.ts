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
import type { ServerModelFigures } from "../model/servers/figures.ts";
import { modelFigures, modelOf } from "../model/servers/models.ts";
import { MODEL_FLAGS } from "../model/servers/model-flags.ts";
import {
  resolveServerSystem,
  SERVER_SYSTEM_FLAGS_AFTER_SEED,
  SERVER_SYSTEM_FLAGS_BEFORE_SEED,
  type ServerSystem,
  serverModelOf,
} from "../config/server-system.ts";
import { adminListenProblem } from "./admin-listen.ts";
import { UsageError } from "../cli/usage-error.ts";
import { resolveUpstream, UPSTREAM_FLAGS, type UpstreamOptions } from "./upstream.ts";

/**
 * Node's own headers timeout is off when the request timeout is (requests here may stay in
 * service for hours), so the server sets one itself: without it, connections that never
 * finish their request head (slowloris) would hold descriptors for ever.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

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
  ...SERVER_SYSTEM_FLAGS_BEFORE_SEED,
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
  ...SERVER_SYSTEM_FLAGS_AFTER_SEED,
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
 * middle tier's (-upstream, src/options/upstream.ts), which only a real server runs.
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

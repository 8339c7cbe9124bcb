import { WORKLOAD_HELP } from "../cli/workload.ts";
import { formatDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ParseOutcome, type ProgramDescription } from "../cli/flags.ts";
import { instantProblem, parseInstant } from "../cli/instant.ts";
import { UsageError } from "../cli/usage-error.ts";
import { type ListenAddress, listenAddressProblem, parseListenAddress } from "../cli/listen-address.ts";
import type { RetryConfig } from "../model/client-loop.ts";
import { hasProtection } from "../model/client-instances.ts";
import { defaultBehindThresholdMs } from "../model/client-behind.ts";
import { protectionHelp } from "../strategies/protection.ts";
import { strategiesHelp } from "../strategies/registry.ts";
import { type LoadConfig, POLICY_AND_LOAD_FLAGS, resolveLoadConfig, USERS_FLAGS } from "../config/load.ts";
import { parseShard, type Shard, shardProblem } from "../contracts/shard-label.ts";
import { autoWorkers, USERS_PER_THREAD } from "./client-workers.ts";
import { workersFlag } from "../cli/workers-flag.ts";
import { MAX_BODY_FLAG } from "../runtime/http-body.ts";
import { checkUrl } from "../cli/url.ts";

/** The most worker threads -workers starts. */
const MAX_WORKERS = 1024;

/** Flags, defaults and help of ./client, in one table; the first five are the reference's. */
export const CLIENT_FLAGS = [
  ...USERS_FLAGS,
  {
    name: "url",
    group: "run",
    kind: "string",
    default: "http://127.0.0.1:8070/api",
    placeholder: "url",
    description: "where to send requests",
    check: checkUrl,
  },
  ...POLICY_AND_LOAD_FLAGS,
  {
    name: "json",
    group: "output",
    kind: "boolean",
    default: false,
    description: "print one JSON object per window instead of the text line",
  },
  { name: "duration", group: "run", kind: "duration", default: 0, minMs: 0, description: "stop after this long (0 = until interrupted)" },
  {
    name: "seed",
    group: "run",
    kind: "integer",
    default: undefined,
    min: 0,
    max: 2 ** 31 - 1,
    placeholder: "n",
    description: "random seed for a reproducible schedule (default: random, printed at start); each user draws from its own stream of it",
  },
  {
    name: "shard",
    group: "run",
    kind: "string",
    default: "0/1",
    placeholder: "i/n",
    description:
      "run shard i of n: this process's share of the -clients users, the same users with the same seeded schedules as in one process; merge the shards' -json with 'thundering-herd merge'",
    check: shardProblem,
  },
  {
    name: "start-at",
    group: "run",
    kind: "string",
    default: undefined,
    placeholder: "time",
    description:
      "start at this instant (RFC 3339 or epoch ms), waiting until then; reporting windows fall on a grid anchored there, so shards on many machines share window boundaries",
    check: instantProblem,
  },
  workersFlag(
    MAX_WORKERS,
    "worker threads to spread this process's users over; their windows are merged exactly. " +
      `auto: one per ${USERS_PER_THREAD.toLocaleString("en")} users (measured by npm run bench -- client), at most one per core`,
  ),
  {
    name: "behind-threshold",
    group: "run",
    kind: "duration",
    default: 0,
    minMs: 0,
    description:
      "mark a window, and warn on stderr, when the client itself falls behind: its attempts' lateness p99 or its event loop's delay p50 " +
      "above this, or an attempt it could not send (no descriptor or local port); 0 = 10% of -timeout, at least 100ms",
  },
  {
    name: "metrics-listen",
    group: "output",
    kind: "string",
    default: "",
    placeholder: "host:port",
    description: "serve GET /metrics (Prometheus text format) on this address, e.g. 127.0.0.1:9464 (empty: off)",
    check: listenAddressProblem,
  },
  MAX_BODY_FLAG,
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const CLIENT_PROGRAM: ProgramDescription<typeof CLIENT_FLAGS> = {
  name: "client",
  summary:
    "N simulated clients with exponentially distributed request intervals, retrying failures with a strategy.\n" +
    "Every interval it prints OK / errors / timedout req/sec.\n" +
    `Another workload: ${WORKLOAD_HELP}.`,
  flags: CLIENT_FLAGS,
  epilog: `Strategies:\n${strategiesHelp()}\nFleet-level protection (state kept per client instance, see -instances):\n${protectionHelp()}`,
};

export interface ClientOptions extends LoadConfig {
  readonly url: string;
  readonly json: boolean;
  /** 0 runs until interrupted. */
  readonly durationMs: number;
  readonly seed: number | undefined;
  /** Where to serve GET /metrics; undefined for nowhere. */
  readonly metricsListen: ListenAddress | undefined;
  readonly shard: Shard;
  /** When to start (epoch ms), and where the window grid is anchored; undefined: now. */
  readonly startAtEpochMs: number | undefined;
  readonly workers: number;
  /** Lateness p99 or event-loop delay p50 above this marks a window as the client's own fault (src/model/client-behind.ts). */
  readonly behindThresholdMs: number;
  /** An answer's body longer than this is an error (body-too-large). */
  readonly maxBodyBytes: number;
}

export type ClientFlagValues = FlagValues<typeof CLIENT_FLAGS>;

export function parseClientArgs(args: readonly string[]): ParseOutcome<typeof CLIENT_FLAGS> {
  return parseFlags(CLIENT_PROGRAM, args);
}

export function resolveClientOptions(values: ClientFlagValues): ClientOptions {
  const options: ClientOptions = {
    ...resolveLoadConfig(values),
    url: values.url,
    json: values.json,
    durationMs: values.duration,
    seed: values.seed,
    metricsListen: metricsAddress(values["metrics-listen"]),
    shard: parseShard(values.shard),
    startAtEpochMs: values["start-at"] === undefined ? undefined : parseInstant(values["start-at"]),
    workers: 1,
    behindThresholdMs: values["behind-threshold"] > 0 ? values["behind-threshold"] : defaultBehindThresholdMs(values.timeout),
    maxBodyBytes: values["max-body"],
  };
  const resolved = { ...options, workers: resolveWorkers(values, options.retry.fleet) };
  checkShareCombinations(resolved);
  return resolved;
}

/**
 * What does not run split over shares (-shard) or worker threads (-workers) yet: each is a
 * usage error rather than a run that quietly means something else.
 */
function checkShareCombinations(options: ClientOptions): void {
  const split = options.shard.count > 1 || options.workers > 1;
  if (!split) return;
  const how = options.shard.count > 1 ? `-shard ${options.shard.index}/${options.shard.count}` : `-workers ${options.workers}`;
  // The arrival process is one Poisson process with one bound on the requests alive; it is not split.
  if (options.arrivals.kind === "open")
    throw new UsageError(`-arrivals open runs in one thread of one process; it cannot be combined with ${how}`);
  // Only this thread's counters are registered; the worker threads' are not collected.
  if (options.metricsListen !== undefined && options.workers > 1) {
    throw new UsageError(`-metrics-listen counts the main thread's users only; it cannot be combined with -workers ${options.workers}`);
  }
  // User i belongs to instance i mod -instances, so an instance's users are spread over every
  // share, and its budget, throttle and breaker cannot be shared across threads or processes.
  // One instance per user is the same in any split.
  const fleet = options.retry.fleet;
  if (hasProtection(fleet) && fleet.instances !== 0 && fleet.instances < options.clients) {
    throw new UsageError(
      `-instances ${fleet.instances} spreads each instance's users over every share; with ${how} use -instances 0 (one per client)`,
    );
  }
}

/**
 * The thread count: as given, or for `auto`, from this process's share of the users and the
 * cores (src/options/client-workers.ts). What runs in one thread only (-metrics-listen, open-loop
 * arrivals) gets one.
 */
function resolveWorkers(values: ClientFlagValues, fleet: RetryConfig["fleet"]): number {
  if (values.workers !== "auto") return Number(values.workers);
  if (values["metrics-listen"] !== "" || values.arrivals === "open") return 1;
  // Client instances shared by users of several threads cannot be split (see checkShareCombinations).
  if (hasProtection(fleet) && fleet.instances !== 0 && fleet.instances < values.clients) return 1;
  const shard = parseShard(values.shard);
  return autoWorkers(Math.ceil(values.clients / shard.count));
}

function metricsAddress(text: string): ListenAddress | undefined {
  if (text === "") return undefined;
  const address = parseListenAddress(text);
  if (typeof address === "string") throw new UsageError(`invalid value "${text}" for flag -metrics-listen: ${address}`);
  return address;
}

/** Who sends, for the start-up line: the users, or the arrival process; `split` says how they are split (shards, threads). */
export function describeLoad(options: ClientOptions, split = ""): string {
  return options.arrivals.kind === "open"
    ? `open-loop arrivals at ${options.arrivals.ratePerSec}/s (at most ${options.arrivals.maxChains} alive)${split}`
    : `${options.clients} clients${split}, lambda ${formatDuration(options.retry.thinkTimeMeanMs)}`;
}

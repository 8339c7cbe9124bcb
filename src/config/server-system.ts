import type { FlagSpec, FlagValues } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { LatencyModel } from "../model/latency.ts";
import { DEFAULT_MAX_IN_SERVICE } from "../model/servers/bookkeeping.ts";
import { MODEL_FLAGS, resolveServerModel } from "../model/servers/model-flags.ts";
import type { ServerModelSpec } from "../model/servers/models.ts";
import { DEADLINE_HEADER, retryAfterSeconds } from "../model/protection-headers.ts";

/*
 * The server itself: its model and limits, what it sheds and how, the errors it injects, how
 * often it reports. One typed value (ServerSystem) that ./server and the simulator both read
 * from the same flags; how ./server runs (where it listens, what it prints) is its own.
 */

/** The largest -max-in-service: the simulator stores each request in service in about 25 bytes. */
export const MAX_IN_SERVICE_CEILING = 10_000_000;

/** How a shed request is turned away: answered 503 at once, or dropped unanswered (a full accept queue's SYN drop). */
export const SHED_WITH = ["503", "drop"] as const;
export type ShedWith = (typeof SHED_WITH)[number];

/** The server's flags besides its model's that come before -seed in ./server's table… */
export const SERVER_SYSTEM_FLAGS_BEFORE_SEED = [
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
] as const satisfies readonly FlagSpec[];

/** …and after it. */
export const SERVER_SYSTEM_FLAGS_AFTER_SEED = [
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
] as const satisfies readonly FlagSpec[];

/** Every flag of the server itself, in ./server's order: its model's first (model-flags.ts). */
export const SERVER_SYSTEM_FLAGS = [...MODEL_FLAGS, ...SERVER_SYSTEM_FLAGS_BEFORE_SEED, ...SERVER_SYSTEM_FLAGS_AFTER_SEED];

/** The server itself, as its flags describe it (this file's first comment); ServerOptions adds how ./server runs. */
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

/** The server model the options describe. */
export function serverModelOf(options: { readonly model?: ServerModelSpec | undefined; readonly latency: LatencyModel }): ServerModelSpec {
  return options.model ?? { kind: "exponential", latency: options.latency };
}

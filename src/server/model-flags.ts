import { formatDuration } from "../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { DEFAULT_LATENCY_MODEL } from "../model/latency.ts";
import { DEFAULT_SLOPE_MS } from "../model/servers/linear.ts";
import {
  DEFAULT_THREAD_POOL,
  QUEUE_ORDERS,
  type QueueOrder,
  SERVICE_DISTRIBUTIONS,
  type ServiceDistribution,
} from "../model/servers/queue.ts";
import type { ServerModelFigures } from "../model/servers/figures.ts";
import { SERVER_MODEL_KINDS, type ServerModelKind, type ServerModelSpec } from "../model/servers/models.ts";

const POOL = DEFAULT_THREAD_POOL;

/**
 * The flags of the server models (src/model/servers), in the flag tables of ./server and
 * ./sim alike. The first three keep the reference's Go names. The exponential model's flags
 * show their defaults; the others have none in the table (their defaults are in their
 * descriptions), so that setting one for a model that does not read it can be told from
 * leaving it alone.
 */
export const MODEL_FLAGS = [
  {
    name: "limit",
    group: "system",
    kind: "integer",
    default: DEFAULT_LATENCY_MODEL.limit,
    min: 0,
    placeholder: "n",
    description: "limit on concurrency: requests in service before the delay grows",
  },
  {
    name: "factor",
    group: "system",
    kind: "number",
    default: DEFAULT_LATENCY_MODEL.factor,
    min: 1,
    placeholder: "f",
    description: "factor of increasing delay: delay = baseDelay * factor^((concurrency - limit) / k)",
  },
  {
    name: "baseDelay",
    group: "system",
    kind: "duration",
    default: DEFAULT_LATENCY_MODEL.baseDelayMs,
    minMs: 0,
    description: "base service delay, at or below the limit (linear model: delay = baseDelay + slope * concurrency)",
  },
  {
    name: "k",
    group: "system",
    kind: "number",
    default: DEFAULT_LATENCY_MODEL.exponentDivisor,
    min: 0,
    minExclusive: true,
    placeholder: "n",
    description: "divisor K of the exponent (15 in the reference server)",
  },
  {
    name: "model",
    group: "system",
    kind: "string",
    default: "exponential",
    choices: SERVER_MODEL_KINDS,
    placeholder: "name",
    description:
      "server model: exponential (the delay grows exponentially above -limit), linear (-baseDelay + -slope per request in service), " +
      "queue (a thread pool: -threads, -service-time, a queue)",
  },
  {
    name: "slope",
    group: "system",
    kind: "duration",
    default: undefined,
    minMs: 0,
    description: `linear model: delay each request in service adds (default ${formatDuration(DEFAULT_SLOPE_MS)})`,
  },
  {
    name: "threads",
    group: "system",
    kind: "integer",
    default: undefined,
    min: 1,
    max: 1_000_000,
    placeholder: "n",
    description: `queue model: requests served at once (default ${POOL.threads})`,
  },
  {
    name: "service-time",
    group: "system",
    kind: "duration",
    default: undefined,
    minMs: 0,
    minExclusive: true,
    description: `queue model: mean service time of one request (default ${formatDuration(POOL.serviceTimeMs)})`,
  },
  {
    name: "service-dist",
    group: "system",
    kind: "string",
    default: undefined,
    choices: SERVICE_DISTRIBUTIONS,
    placeholder: "name",
    description: `queue model: distribution of service times, ${SERVICE_DISTRIBUTIONS.join(", ")} (default ${POOL.serviceDist}; seeded by -seed)`,
  },
  {
    name: "service-sigma",
    group: "system",
    kind: "number",
    default: undefined,
    min: 0,
    minExclusive: true,
    placeholder: "s",
    description: `queue model, lognormal service times: sigma of the underlying normal; the mean stays -service-time (default ${POOL.serviceSigma})`,
  },
  {
    name: "queue-order",
    group: "system",
    kind: "string",
    default: undefined,
    choices: QUEUE_ORDERS,
    placeholder: "order",
    description: `queue model: which waiting request a free thread takes, fifo (oldest) or lifo (newest) (default ${POOL.queueOrder})`,
  },
  {
    name: "queue-limit",
    group: "system",
    kind: "integer",
    default: undefined,
    min: 0,
    placeholder: "n",
    description: "queue model: requests that may wait; one more is answered 503 at once (default 0 = unbounded)",
  },
] as const satisfies readonly FlagSpec[];

type ModelFlagValues = FlagValues<typeof MODEL_FLAGS> & { readonly "max-concurrency": number };

/** The flags each model reads; any other model flag set to something other than its default is a usage error. */
const READS: Readonly<Record<ServerModelKind, readonly string[]>> = {
  exponential: ["limit", "factor", "baseDelay", "k", "max-concurrency"],
  linear: ["baseDelay", "slope", "max-concurrency"],
  queue: ["threads", "service-time", "service-dist", "service-sigma", "queue-order", "queue-limit"],
};

/** Flags some model reads, with their table defaults (-max-concurrency's 0 means off). */
const MODEL_FLAG_DEFAULTS = new Map<string, unknown>([
  ...MODEL_FLAGS.filter((flag) => flag.name !== "model").map((flag) => [flag.name, flag.default] as const),
  ["max-concurrency", 0],
]);

/** The model the flag values describe; a UsageError for a flag the model does not read. */
export function resolveServerModel(values: ModelFlagValues): ServerModelSpec {
  const kind = values.model as ServerModelKind;
  const reads = READS[kind];
  for (const [name, fallback] of MODEL_FLAG_DEFAULTS) {
    if (reads.includes(name) || values[name as keyof ModelFlagValues] === fallback) continue;
    throw new UsageError(`-${name} does not apply to -model ${kind} (it takes ${reads.map((flag) => `-${flag}`).join(", ")})`);
  }
  if (values["service-sigma"] !== undefined && values["service-dist"] !== "lognormal") {
    throw new UsageError("-service-sigma needs -service-dist lognormal");
  }
  switch (kind) {
    case "exponential":
      return {
        kind,
        latency: { baseDelayMs: values.baseDelay, limit: values.limit, factor: values.factor, exponentDivisor: values.k },
      };
    case "linear":
      return { kind, latency: { kind, baseDelayMs: values.baseDelay, slopeMs: values.slope ?? DEFAULT_SLOPE_MS } };
    case "queue": {
      const queueLimit = values["queue-limit"] ?? 0;
      return {
        kind,
        pool: {
          threads: values.threads ?? POOL.threads,
          serviceTimeMs: values["service-time"] ?? POOL.serviceTimeMs,
          serviceDist: (values["service-dist"] as ServiceDistribution | undefined) ?? POOL.serviceDist,
          serviceSigma: values["service-sigma"] ?? POOL.serviceSigma,
          queueOrder: (values["queue-order"] as QueueOrder | undefined) ?? POOL.queueOrder,
          queueLimit: queueLimit === 0 ? Infinity : queueLimit,
        },
      };
    }
  }
}

/** The model and its parameters as flags would set them, e.g. `queue (8 threads, constant 20ms, fifo, unbounded queue)`. */
export function describeModelSpec(spec: ServerModelSpec): string {
  switch (spec.kind) {
    case "exponential": {
      const { limit, factor, exponentDivisor, baseDelayMs } = spec.latency;
      return `exponential (limit ${limit}, factor ${factor}, k ${exponentDivisor}, baseDelay ${formatDuration(baseDelayMs)})`;
    }
    case "linear":
      return `linear (baseDelay ${formatDuration(spec.latency.baseDelayMs)} + slope ${formatDuration(spec.latency.slopeMs)} per request in service)`;
    case "queue": {
      const pool = spec.pool;
      const dist = pool.serviceDist === "lognormal" ? `lognormal (sigma ${pool.serviceSigma})` : pool.serviceDist;
      const queue = Number.isFinite(pool.queueLimit) ? `queue of ${pool.queueLimit}` : "unbounded queue";
      return `queue (${pool.threads} threads, ${dist} service time ${formatDuration(pool.serviceTimeMs)}, ${pool.queueOrder}, ${queue})`;
    }
  }
}

const rate = (perSec: number) => String(Number(perSec.toFixed(1)));

/**
 * One line: the model, its capacity and its tipping point, e.g. `model queue (…): capacity
 * 400 req/s (at 8 in the server); tipping point 799 in the server (…)`.
 */
export function describeModel(spec: ServerModelSpec, figures: ServerModelFigures, timeoutMs: number): string {
  const capacity = Number.isFinite(figures.capacityPerSec)
    ? `capacity ${rate(figures.capacityPerSec)} req/s (at ${figures.capacityAtConcurrency} in the server)`
    : "capacity unbounded (the delay never grows)";
  const tipping =
    figures.tippingConcurrency === undefined
      ? "no tipping point"
      : `tipping point ${figures.tippingConcurrency} in the server (a request's time there reaches a ${formatDuration(timeoutMs)} client timeout)`;
  return `model ${describeModelSpec(spec)}: ${capacity}; ${tipping}`;
}

/** Whether the model draws random numbers (and so needs a seed). */
export function modelDrawsRandom(spec: ServerModelSpec): boolean {
  return spec.kind === "queue" && spec.pool.serviceDist !== "constant";
}

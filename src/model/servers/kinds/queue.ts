import { formatDuration } from "../../../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../../../cli/flags.ts";
import { UsageError } from "../../../cli/usage-error.ts";
import type { ServerModelFigures } from "../figures.ts";
import { type CommonServerOptions, defineServerModel, significant } from "../kind.ts";
import { OrderedPool } from "../ordered-pool.ts";
import {
  DEFAULT_THREAD_POOL,
  QUEUE_ORDERS,
  type QueueOrder,
  SERVICE_DISTRIBUTIONS,
  type ServiceDistribution,
  ThreadPool,
  type ThreadPoolOptions,
  type ThreadPoolShape,
} from "../queue.ts";
import { UpstreamPool } from "../upstream-pool.ts";

/** The queue model: a thread pool (src/model/servers/queue.ts), which alone can be a middle tier. */
export type QueueSpec = { readonly kind: "queue"; readonly pool: ThreadPoolShape };

const POOL = DEFAULT_THREAD_POOL;

/**
 * Requests per second the pool serves flat out (threads ÷ mean service time), and, for a
 * fifo queue, its tipping point: the requests in the server at which a new one's expected
 * time in it (the rounds it waits plus its own service) reaches the client timeout; from
 * there on, without cancel-on-disconnect, the pool serves mostly requests nobody waits for.
 * A lifo queue serves the newest first, and a queue too short to reach that point sheds
 * first: neither has one. The verdict calls the pool over its tipping point while more
 * wait than one request per thread (at most the queue limit less one).
 */
export function queueFigures(shape: ThreadPoolShape, timeoutMs: number): ServerModelFigures {
  const { threads, serviceTimeMs } = shape;
  const capacityPerSec = threads / (serviceTimeMs / 1000);
  let tipping: number | undefined =
    serviceTimeMs >= timeoutMs ? 0 : Math.ceil(threads - 1 + ((timeoutMs - serviceTimeMs) * threads) / serviceTimeMs);
  if (shape.queueOrder === "lifo" || (tipping !== undefined && tipping > threads + shape.queueLimit)) tipping = undefined;
  const toleratedQueue = Math.min(threads, shape.queueLimit - 1);
  return { capacityPerSec, capacityAtConcurrency: threads, tippingConcurrency: tipping, overloadAbove: threads + toleratedQueue };
}

function threadPoolOptions(pool: ThreadPoolShape, options: CommonServerOptions): ThreadPoolOptions {
  return {
    ...pool,
    cancelOnDisconnect: options.cancelOnDisconnect,
    errorInjection: options.errorInjection,
    maxInService: options.maxInService ?? Infinity,
    random: options.serviceRandom,
  };
}

/** Its flags; their defaults are in their descriptions, so that setting one for another model can be told from leaving it alone. */
const FLAGS = [
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

function read(values: FlagValues<typeof FLAGS>): QueueSpec {
  if (values["service-sigma"] !== undefined && values["service-dist"] !== "lognormal") {
    throw new UsageError("-service-sigma needs -service-dist lognormal");
  }
  const queueLimit = values["queue-limit"] ?? 0;
  return {
    kind: "queue",
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

function describe({ pool }: QueueSpec): string {
  const dist = pool.serviceDist === "lognormal" ? `lognormal (sigma ${pool.serviceSigma})` : pool.serviceDist;
  const queue = Number.isFinite(pool.queueLimit) ? `queue of ${pool.queueLimit}` : "unbounded queue";
  return `queue (${pool.threads} threads, ${dist} service time ${formatDuration(pool.serviceTimeMs)}, ${pool.queueOrder}, ${queue})`;
}

export const queue = defineServerModel({
  name: "queue",
  help: "queue (a thread pool: -threads, -service-time, a queue)",
  flags: FLAGS,
  reads: ["threads", "service-time", "service-dist", "service-sigma", "queue-order", "queue-limit"],
  read,
  describe,
  // What a fit finds: the queue's order and limit are not fitted, and stay the flags' defaults.
  settings: ({ pool: { threads, serviceTimeMs, serviceDist, serviceSigma } }) => ({
    model: "queue",
    threads,
    "service-time": formatDuration(serviceTimeMs),
    "service-dist": serviceDist,
    ...(serviceDist === "lognormal" ? { "service-sigma": serviceSigma } : {}),
  }),
  rounded: (spec) => ({ ...spec, pool: { ...spec.pool, serviceTimeMs: significant(spec.pool.serviceTimeMs, 3) } }),
  /*
   * `threads` serve at once, the rest wait. Each request also spends `overheadMs` outside the
   * threads (the network, the client, a connection's set-up), during which it holds no thread:
   * the pool is saturated once concurrency × serviceTime reaches threads × (serviceTime +
   * overhead). Below that a request takes serviceTime + overhead; above it the pool answers
   * threads ÷ serviceTime per second, so a request takes concurrency × serviceTime ÷ threads
   * (Little's law): the asymptotic bounds of a closed queueing network, exact for constant times.
   */
  closedLoopLatencyMs: ({ pool: { serviceTimeMs, threads } }, concurrency, overheadMs) =>
    Math.max(serviceTimeMs + overheadMs, (concurrency * serviceTimeMs) / threads),
  figures: (spec, timeoutMs) => queueFigures(spec.pool, timeoutMs),
  create: ({ pool }, clock, options) => {
    const ordered =
      options.fixedServiceTime === true && pool.serviceDist === "constant" && pool.queueOrder === "fifo" && !options.cancelOnDisconnect;
    return ordered ? new OrderedPool(clock, threadPoolOptions(pool, options)) : new ThreadPool(clock, threadPoolOptions(pool, options));
  },
  drawsRandom: (spec) => spec.pool.serviceDist !== "constant",
  // Beyond the waiting requests its threads serve within half the timeout.
  shedding: ({ pool: { threads, serviceTimeMs } }, timeoutMs) => ({
    flag: "queue-limit",
    at: Math.max(1, Math.floor((threads * timeoutMs) / 2 / serviceTimeMs)),
    where: "waiting (the threads serve them within half the timeout)",
  }),
  // Its requests hold their thread while they make their upstream calls.
  middleTier: {
    threads: (spec) => spec.pool.threads,
    create: ({ pool }, clock, options, caller) => new UpstreamPool(clock, threadPoolOptions(pool, options), caller),
  },
});

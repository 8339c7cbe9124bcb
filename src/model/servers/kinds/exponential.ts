import { formatDuration } from "../../../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../../../cli/flags.ts";
import { DEFAULT_LATENCY_MODEL, type LatencyModel } from "../../latency.ts";
import { type ServerModelFigures, sharedDelayFigures } from "../figures.ts";
import { type DelayCurve, defineServerModel, significant } from "../kind.ts";
import { BASE_DELAY_FLAG, sharedDelayParts } from "../delay-models.ts";

/**
 * The exponential model, the default: the article's server (src/model/latency.ts holds its
 * parameters, ServiceQueue its requests), a fixed delay up to a concurrency limit, exponential
 * above it:
 *
 *   delay(c) = baseDelay                                  when c <= limit
 *   delay(c) = baseDelay * factor ^ ((c - limit) / K)     otherwise
 */
export type ExponentialSpec = { readonly kind: "exponential"; readonly latency: LatencyModel };

/**
 * The modelled delay in ms for `concurrency` requests in service. Unlike the reference
 * server's int64 nanoseconds it never wraps: it grows to Infinity (a request that would
 * outlive any clock), never to a negative or NaN value.
 */
function delayMs(model: LatencyModel, concurrency: number): number {
  if (concurrency <= model.limit || model.baseDelayMs === 0) return model.baseDelayMs;
  return model.baseDelayMs * model.factor ** ((concurrency - model.limit) / model.exponentDivisor);
}

function concurrencyForDelay(model: LatencyModel, delay: number): number {
  if (delay <= model.baseDelayMs) return 0;
  if (model.factor <= 1 || model.baseDelayMs === 0) return Infinity;
  const exponent = Math.log(delay / model.baseDelayMs) / Math.log(model.factor);
  let concurrency = Math.max(model.limit + 1, Math.ceil(model.limit + exponent * model.exponentDivisor));
  // Correct a floating-point off-by-one in either direction.
  while (concurrency > model.limit + 1 && delayMs(model, concurrency - 1) >= delay) concurrency--;
  while (delayMs(model, concurrency) < delay) concurrency++;
  return concurrency;
}

/** The curve; under faults the limit × capacity and the base delay × slow. */
export const exponentialCurve: DelayCurve<LatencyModel> = {
  delayMs,
  concurrencyForDelay,
  under: (curve, { capacityFactor, slowFactor }) =>
    capacityFactor === 1 && slowFactor === 1
      ? curve
      : { ...curve, limit: Math.round(curve.limit * capacityFactor), baseDelayMs: curve.baseDelayMs * slowFactor },
};

/**
 * Its throughput c ÷ delay(c) rises up to the limit and on above it up to c = K ÷ ln(factor),
 * where the delay's growth overtakes the concurrency's; its capacity is the most of that
 * within the client timeout. The verdict reads its limit, as the article does: the server is
 * back once it is under the limit again.
 */
export function exponentialFigures(latency: LatencyModel, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  const peaksAt = latency.factor > 1 ? Math.max(latency.limit, latency.exponentDivisor / Math.log(latency.factor)) : Infinity;
  const delay = (concurrency: number) => delayMs(latency, concurrency);
  return sharedDelayFigures(delay, concurrencyForDelay(latency, timeoutMs), maxConcurrency, peaksAt, latency.limit);
}

/** Its flags, the reference server's Go names, with their defaults shown. */
const FLAGS = [
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
  BASE_DELAY_FLAG,
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
] as const satisfies readonly FlagSpec[];

/** (limit 30, factor 1.05, k 15, baseDelay 100ms) */
function parameters({ limit, factor, exponentDivisor, baseDelayMs }: LatencyModel): string {
  return `(limit ${limit}, factor ${factor}, k ${exponentDivisor}, baseDelay ${formatDuration(baseDelayMs)})`;
}

export const exponential = defineServerModel({
  name: "exponential",
  help: "exponential (the delay grows exponentially above -limit)",
  flags: FLAGS,
  reads: ["limit", "factor", "baseDelay", "k", "max-concurrency"],
  read: (values: FlagValues<typeof FLAGS>): ExponentialSpec => ({
    kind: "exponential",
    latency: { baseDelayMs: values.baseDelay, limit: values.limit, factor: values.factor, exponentDivisor: values.k },
  }),
  describe: (spec) => `exponential ${parameters(spec.latency)}`,
  settings: ({ latency: { limit, factor, exponentDivisor, baseDelayMs } }) => ({
    model: "exponential",
    limit,
    factor,
    k: exponentDivisor,
    baseDelay: formatDuration(baseDelayMs),
  }),
  rounded: (spec) => ({
    ...spec,
    latency: { ...spec.latency, baseDelayMs: significant(spec.latency.baseDelayMs, 3), factor: significant(spec.latency.factor, 4) },
  }),
  figures: (spec, timeoutMs, maxConcurrency) => exponentialFigures(spec.latency, timeoutMs, maxConcurrency),
  ...sharedDelayParts<LatencyModel, ExponentialSpec>(exponentialCurve, (latency) => latency.limit),
  timeoutNote: (spec, timeoutMs) =>
    `the delay reaches the ${formatDuration(timeoutMs)} timeout at ${concurrencyForDelay(spec.latency, timeoutMs)} requests in service ` +
    parameters(spec.latency),
});

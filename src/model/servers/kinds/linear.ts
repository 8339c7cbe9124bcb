import { formatDuration } from "../../../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../../../cli/flags.ts";
import { type ServerModelFigures, sharedDelayFigures } from "../figures.ts";
import { type DelayCurve, defineServerModel, significant } from "../kind.ts";
import { BASE_DELAY_FLAG, sharedDelayParts } from "../delay-models.ts";

/**
 * The linear server model, from Marc Brooker's collapse simulation (`simple_collapse_sim` in
 * https://github.com/mbrooker/simulator_example): every request in service takes
 *
 *   delay(c) = baseDelay + slope * c
 *
 * for the c requests in service at that instant (1 s + 10 ms × concurrency there). It shares
 * ServiceQueue with the exponential model: one delay for all, re-evaluated as c changes.
 */
export interface LinearLatency {
  readonly kind: "linear";
  /** The delay of a server with nothing else in service, less one slope, in ms. */
  readonly baseDelayMs: number;
  /** What each request in service adds to everyone's delay, in ms. */
  readonly slopeMs: number;
}

export type LinearSpec = { readonly kind: "linear"; readonly latency: LinearLatency };

/** Brooker's slope: 10 ms per request in service. */
export const DEFAULT_SLOPE_MS = 10;

function delayMs(model: LinearLatency, concurrency: number): number {
  return model.baseDelayMs + model.slopeMs * concurrency;
}

function concurrencyForDelay(model: LinearLatency, delay: number): number {
  if (delay <= model.baseDelayMs) return 0;
  if (model.slopeMs <= 0) return Infinity;
  let concurrency = Math.ceil((delay - model.baseDelayMs) / model.slopeMs);
  // Correct a floating-point off-by-one in either direction.
  while (concurrency > 0 && delayMs(model, concurrency - 1) >= delay) concurrency--;
  while (delayMs(model, concurrency) < delay) concurrency++;
  return concurrency;
}

/** The curve; under faults the whole delay × slow ÷ capacity (a CPU cut slows every request in service alike). */
export const linearCurve: DelayCurve<LinearLatency> = {
  delayMs,
  concurrencyForDelay,
  under: (curve, { capacityFactor, slowFactor }) => {
    if (capacityFactor === 1 && slowFactor === 1) return curve;
    const scale = slowFactor / capacityFactor;
    return { ...curve, baseDelayMs: curve.baseDelayMs * scale, slopeMs: curve.slopeMs * scale };
  },
};

/**
 * Capacity and tipping point (see sharedDelayFigures). c ÷ (baseDelay + slope × c) only
 * rises, so the capacity is at the most requests in service whose delay is still below the
 * timeout: 199 ÷ 2.99 s = 66.6 req/s for Brooker's 1 s + 10 ms × c and 3 s timeout, between
 * his steady 40 req/s and his spike to 80. The verdict calls the server back once its delay
 * is below the timeout again (at most the tipping point less one in service).
 */
export function linearFigures(latency: LinearLatency, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  const tipping = concurrencyForDelay(latency, timeoutMs);
  const delay = (concurrency: number) => delayMs(latency, concurrency);
  return sharedDelayFigures(delay, tipping, maxConcurrency, Infinity, Math.max(0, tipping - 1));
}

/** Its own flag; its default is in the description, so that setting it for another model can be told from leaving it alone. */
const FLAGS = [
  {
    name: "slope",
    group: "system",
    kind: "duration",
    default: undefined,
    minMs: 0,
    description: `linear model: delay each request in service adds (default ${formatDuration(DEFAULT_SLOPE_MS)})`,
  },
] as const satisfies readonly FlagSpec[];

export const linear = defineServerModel({
  name: "linear",
  help: "linear (-baseDelay + -slope per request in service)",
  flags: FLAGS,
  reads: ["baseDelay", "slope", "max-concurrency"],
  read: (values: FlagValues<readonly [typeof BASE_DELAY_FLAG, ...typeof FLAGS]>): LinearSpec => ({
    kind: "linear",
    latency: { kind: "linear", baseDelayMs: values.baseDelay, slopeMs: values.slope ?? DEFAULT_SLOPE_MS },
  }),
  describe: ({ latency }) =>
    `linear (baseDelay ${formatDuration(latency.baseDelayMs)} + slope ${formatDuration(latency.slopeMs)} per request in service)`,
  settings: ({ latency }) => ({ model: "linear", baseDelay: formatDuration(latency.baseDelayMs), slope: formatDuration(latency.slopeMs) }),
  rounded: (spec) => ({
    ...spec,
    latency: { ...spec.latency, baseDelayMs: significant(spec.latency.baseDelayMs, 3), slopeMs: significant(spec.latency.slopeMs, 3) },
  }),
  figures: (spec, timeoutMs, maxConcurrency) => linearFigures(spec.latency, timeoutMs, maxConcurrency),
  // Its delay grows from the first request in service.
  ...sharedDelayParts<LinearLatency, LinearSpec>(linearCurve, () => 0),
});

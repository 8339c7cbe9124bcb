import { formatDuration } from "../../../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../../../cli/flags.ts";
import { type ServerModelFigures, sharedDelayFigures } from "../figures.ts";
import { type DelayCurve, defineServerModel, significant } from "../kind.ts";
import { BASE_DELAY_FLAG, sharedDelayParts } from "../delay-models.ts";

/**
 * The Universal Scalability Law (Neil Gunther) as a server model: its throughput with c requests
 * in service is X(c) = λc ÷ (1 + σ(c − 1) + κc(c − 1)), so by Little's law every request in
 * service takes
 *
 *   delay(c) = baseDelay × (1 + σ (c − 1) + κ c (c − 1))        (baseDelay = 1 ÷ λ)
 *
 * σ contention (the share that serialises), κ coherency (the cost of keeping c in step): past
 * c* = √((1 − σ) ÷ κ) its throughput falls, the retrograde service a queue never is. It shares
 * ServiceQueue with the exponential and linear models: one delay for all, re-evaluated as c changes.
 * The probe fits it (src/probe/fit/usl.ts) and names these flags.
 */
export interface UslLatency {
  readonly kind: "usl";
  /** One request alone in service, ms: 1 ÷ λ. */
  readonly baseDelayMs: number;
  readonly sigma: number;
  readonly kappa: number;
}

export type UslSpec = { readonly kind: "usl"; readonly latency: UslLatency };

/** A service that serialises 5 % of its work and pays 0.1 % per pair in coherency: its throughput peaks at 31 in service. */
export const DEFAULT_USL = { sigma: 0.05, kappa: 0.001 } as const;

function delayMs(model: UslLatency, concurrency: number): number {
  const others = Math.max(0, concurrency - 1);
  return model.baseDelayMs * (1 + model.sigma * others + model.kappa * concurrency * others);
}

/** The smallest concurrency whose delay reaches `delay`: the quadratic's root, corrected to the integers either way. */
function concurrencyForDelay(model: UslLatency, delay: number): number {
  if (delay <= model.baseDelayMs) return 0;
  if (model.baseDelayMs === 0 || (model.sigma <= 0 && model.kappa <= 0)) return Infinity;
  // κc² + (σ − κ)c − σ − (delay ÷ baseDelay − 1) = 0 for c ≥ 1.
  const rest = delay / model.baseDelayMs - 1 + model.sigma;
  const b = model.sigma - model.kappa;
  const root = model.kappa === 0 ? rest / model.sigma : (-b + Math.sqrt(b * b + 4 * model.kappa * rest)) / (2 * model.kappa);
  let concurrency = Math.max(1, Math.ceil(root));
  while (concurrency > 1 && delayMs(model, concurrency - 1) >= delay) concurrency--;
  while (delayMs(model, concurrency) < delay) concurrency++;
  return concurrency;
}

/** The curve; under faults the whole delay × slow ÷ capacity, as the linear model's. */
export const uslCurve: DelayCurve<UslLatency> = {
  delayMs,
  concurrencyForDelay,
  under: (curve, { capacityFactor, slowFactor }) =>
    capacityFactor === 1 && slowFactor === 1 ? curve : { ...curve, baseDelayMs: (curve.baseDelayMs * slowFactor) / capacityFactor },
};

/** c*, where c ÷ delay(c) peaks; Infinity without coherency (it only levels off). */
export function uslPeak(model: Pick<UslLatency, "sigma" | "kappa">): number {
  return model.kappa > 0 ? Math.sqrt((1 - Math.min(model.sigma, 1)) / model.kappa) : Infinity;
}

/**
 * Capacity and tipping point (sharedDelayFigures): the throughput rises to c* and falls after
 * it; the verdict calls the server back once its delay is below the timeout again.
 */
export function uslFigures(latency: UslLatency, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  const tipping = concurrencyForDelay(latency, timeoutMs);
  const delay = (concurrency: number) => delayMs(latency, concurrency);
  return sharedDelayFigures(delay, tipping, maxConcurrency, uslPeak(latency), Math.max(0, tipping - 1));
}

/** Its own flags; their defaults are in the descriptions, so that setting one for another model can be told from leaving it alone. */
const FLAGS = [
  {
    name: "usl-sigma",
    group: "system",
    kind: "number",
    default: undefined,
    min: 0,
    max: 1,
    placeholder: "s",
    description: `usl model: contention σ, the share of the work that serialises (default ${DEFAULT_USL.sigma})`,
  },
  {
    name: "usl-kappa",
    group: "system",
    kind: "number",
    default: undefined,
    min: 0,
    placeholder: "k",
    description: `usl model: coherency κ, the cost per pair in service; the throughput peaks at √((1 − σ) ÷ κ) (default ${DEFAULT_USL.kappa})`,
  },
] as const satisfies readonly FlagSpec[];

export const usl = defineServerModel({
  name: "usl",
  help: "usl (Gunther's Universal Scalability Law: -baseDelay × (1 + -usl-sigma (c − 1) + -usl-kappa c (c − 1)))",
  flags: FLAGS,
  reads: ["baseDelay", "usl-sigma", "usl-kappa", "max-concurrency"],
  read: (values: FlagValues<readonly [typeof BASE_DELAY_FLAG, ...typeof FLAGS]>): UslSpec => ({
    kind: "usl",
    latency: {
      kind: "usl",
      baseDelayMs: values.baseDelay,
      sigma: values["usl-sigma"] ?? DEFAULT_USL.sigma,
      kappa: values["usl-kappa"] ?? DEFAULT_USL.kappa,
    },
  }),
  describe: ({ latency }) => `usl (baseDelay ${formatDuration(latency.baseDelayMs)}, sigma ${latency.sigma}, kappa ${latency.kappa})`,
  settings: ({ latency }) => ({
    model: "usl",
    baseDelay: formatDuration(latency.baseDelayMs),
    "usl-sigma": latency.sigma,
    "usl-kappa": latency.kappa,
  }),
  rounded: (spec) => ({
    ...spec,
    latency: {
      ...spec.latency,
      baseDelayMs: significant(spec.latency.baseDelayMs, 3),
      sigma: significant(spec.latency.sigma, 3),
      kappa: significant(spec.latency.kappa, 3),
    },
  }),
  figures: (spec, timeoutMs, maxConcurrency) => uslFigures(spec.latency, timeoutMs, maxConcurrency),
  // Its delay grows from the second request in service.
  ...sharedDelayParts<UslLatency, UslSpec>(uslCurve, () => 1),
});

import type { Clock } from "../../clock/clock.ts";
import { ServiceQueue } from "../service-queue.ts";
import { DEFAULT_LATENCY_MODEL } from "../latency.ts";
import type { CommonServerOptions, DelayCurve, ServerModelDefinition, SharedDelay } from "./kind.ts";

/**
 * What the shared-delay models (exponential, linear) have in common: every request in
 * service takes the curve's delay at the current concurrency (ServiceQueue), so their
 * closed loop, their server and their load shedding follow from the curve alone.
 */

/** -baseDelay, read by both shared-delay models; the exponential model lists it (the reference's Go flag). */
export const BASE_DELAY_FLAG = {
  name: "baseDelay",
  group: "system",
  kind: "duration",
  default: DEFAULT_LATENCY_MODEL.baseDelayMs,
  minMs: 0,
  description: "base service delay, at or below the limit (linear model: delay = baseDelay + slope * concurrency)",
} as const;

/** The curve with its parameters fixed: the bends of a fault apply to these parameters, not to an earlier bend. */
export function boundDelay<Curve>(curve: DelayCurve<Curve>, parameters: NoInfer<Curve>): SharedDelay {
  return {
    delayMs: (concurrency) => curve.delayMs(parameters, concurrency),
    under: (conditions) => boundDelay(curve, curve.under(parameters, conditions)),
  };
}

/** The server of a shared delay. */
export function createSharedDelayQueue(delay: SharedDelay, clock: Clock, options: CommonServerOptions): ServiceQueue {
  return new ServiceQueue(clock, {
    delay,
    cancelOnDisconnect: options.cancelOnDisconnect,
    maxConcurrency: options.maxConcurrency,
    errorInjection: options.errorInjection,
    maxInService: options.maxInService ?? Infinity,
    horizonMs: options.horizonMs ?? Infinity,
  });
}

type SharedDelayParts<Spec extends { readonly kind: string }> = Required<
  Pick<ServerModelDefinition<Spec["kind"], Spec>, "closedLoopLatencyMs" | "create" | "drawsRandom" | "shedding" | "sharedDelay">
>;

/**
 * A shared-delay model's parts that follow from its curve. It sheds load above the most in
 * service whose delay stays below half the client timeout, and never at or below `flatUpTo`
 * (where the delay does not grow yet); a curve that never reaches it sheds at ten times that.
 */
export function sharedDelayParts<Curve, Spec extends { readonly kind: string; readonly latency: Curve }>(
  curve: DelayCurve<Curve>,
  flatUpTo: (parameters: Curve) => number,
): SharedDelayParts<Spec> {
  return {
    closedLoopLatencyMs: (spec, concurrency, overheadMs) => curve.delayMs(spec.latency, concurrency) + overheadMs,
    create: (spec, clock, options) => createSharedDelayQueue(boundDelay(curve, spec.latency), clock, options),
    drawsRandom: () => false,
    shedding: (spec, timeoutMs) => {
      const tipping = curve.concurrencyForDelay(spec.latency, timeoutMs / 2);
      const limit = flatUpTo(spec.latency);
      const at = Number.isFinite(tipping) ? Math.max(limit + 1, tipping - 1) : Math.max(1, limit * 10);
      return { flag: "max-concurrency", at, where: "in service (the delay stays below half the timeout)" };
    },
    sharedDelay: (spec) => boundDelay(curve, spec.latency),
  };
}

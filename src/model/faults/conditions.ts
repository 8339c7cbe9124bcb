import type { DelayCurve } from "../latency.ts";
import type { Fault } from "./fault-schedule.ts";
import { type FaultConditions, NORMAL_CONDITIONS } from "./kind.ts";
import { faultKind } from "./kinds.ts";

export { type FaultConditions, NORMAL_CONDITIONS } from "./kind.ts";

/**
 * The conditions while `active` faults are on, as each condition kind bends them: overlapping
 * faults combine (factors multiply, the largest error share wins).
 */
export function conditionsOf(active: readonly Fault[]): FaultConditions {
  let conditions = NORMAL_CONDITIONS;
  for (const fault of active) {
    const condition = faultKind(fault.kind).condition;
    if (condition !== undefined) conditions = condition.bend(conditions, fault.factor);
  }
  return conditions;
}

/**
 * The shared delay under fault conditions: the exponential model's limit × capacity and
 * base delay × slow; the linear model's whole delay × slow ÷ capacity (a CPU cut slows every
 * request in service alike).
 */
export function curveUnder(curve: DelayCurve, conditions: FaultConditions): DelayCurve {
  const { capacityFactor, slowFactor } = conditions;
  if (capacityFactor === 1 && slowFactor === 1) return curve;
  if (curve.kind === "linear") {
    const scale = slowFactor / capacityFactor;
    return { ...curve, baseDelayMs: curve.baseDelayMs * scale, slopeMs: curve.slopeMs * scale };
  }
  return { ...curve, limit: Math.round(curve.limit * capacityFactor), baseDelayMs: curve.baseDelayMs * slowFactor };
}

import type { DelayCurve } from "../latency.ts";
import type { Fault } from "./fault-schedule.ts";

/** The conditions the server works under while some faults are on (capacity, slow and errors). */
export interface FaultConditions {
  /** Threads or limit × this; 1 when no capacity fault is on. */
  readonly capacityFactor: number;
  /** Service time or delay × this. */
  readonly slowFactor: number;
  /** The share answered 500 instead of the server's own rate; undefined when no errors fault is on. */
  readonly errorRate: number | undefined;
}

export const NORMAL_CONDITIONS: FaultConditions = Object.freeze({ capacityFactor: 1, slowFactor: 1, errorRate: undefined });

/** The conditions while `active` faults are on: factors of overlapping faults multiply, the largest error share wins. */
export function conditionsOf(active: readonly Fault[]): FaultConditions {
  let capacityFactor = 1;
  let slowFactor = 1;
  let errorRate: number | undefined;
  for (const fault of active) {
    if (fault.kind === "capacity") capacityFactor *= fault.factor;
    else if (fault.kind === "slow") slowFactor *= fault.factor;
    else if (fault.kind === "errors") errorRate = Math.max(errorRate ?? 0, fault.factor);
  }
  return { capacityFactor, slowFactor, errorRate };
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

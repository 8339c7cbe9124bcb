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

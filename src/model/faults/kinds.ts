import type { FaultKindDefinition, FaultMechanism } from "./kind.ts";
import { capacity } from "./kinds/capacity.ts";
import { crash } from "./kinds/crash.ts";
import { errors } from "./kinds/errors.ts";
import { slow } from "./kinds/slow.ts";
import { spike } from "./kinds/spike.ts";
import { stop } from "./kinds/stop.ts";

/**
 * Every fault kind, one definition each (src/model/faults/kinds/), in the order help and the
 * fault control list them. A new kind: its file, its test, and its line here (docs/design.md).
 */
export const FAULT_KIND_DEFINITIONS = [stop, crash, capacity, slow, errors, spike] as const;

type Definitions = (typeof FAULT_KIND_DEFINITIONS)[number];
export type FaultKind = Definitions["name"];
/** The kinds the real server's fault control turns on and off (the condition mechanism). */
export type ControlledKind = Extract<Definitions, { readonly mechanism: "condition" }>["name"];

export const FAULT_KINDS: readonly FaultKind[] = FAULT_KIND_DEFINITIONS.map((definition) => definition.name);

const BY_NAME: ReadonlyMap<string, FaultKindDefinition<FaultKind>> = new Map(
  FAULT_KIND_DEFINITIONS.map((definition) => [definition.name, definition]),
);

/** A kind's definition by its name: one the schedule's parser, or the type, has already checked. */
export function faultKind(name: FaultKind): FaultKindDefinition<FaultKind> {
  return BY_NAME.get(name)!;
}

export function isFaultKind(name: string): name is FaultKind {
  return BY_NAME.has(name);
}

/** Whether a fault of this kind is played by this mechanism. */
export function playedAs(fault: { readonly kind: FaultKind }, mechanism: FaultMechanism): boolean {
  return faultKind(fault.kind).mechanism === mechanism;
}

export const CONTROLLED_KINDS: readonly ControlledKind[] = FAULT_KIND_DEFINITIONS.flatMap((definition) =>
  definition.mechanism === "condition" ? [definition.name as ControlledKind] : [],
);

export function isControlledKind(name: string): name is ControlledKind {
  return (CONTROLLED_KINDS as readonly string[]).includes(name);
}

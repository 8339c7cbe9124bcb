import { defineFaultKind, positiveFactor } from "../kind.ts";

/** Service time (queue model) or delay (shared-delay models) × f: a slow dependency, a GC storm. Overlapping slow faults multiply. */
export const slow = defineFaultKind({
  name: "slow",
  help: "slow *f: service time or delay",
  factor: positiveFactor("slow@10s+30s*3"),
  mechanism: "condition",
  condition: {
    bend: (conditions, factor) => ({ ...conditions, slowFactor: conditions.slowFactor * factor }),
    read: (conditions) => conditions.slowFactor,
  },
  keepsServerDelays: false,
  injectsErrors: false,
  changesServiceTime: true,
  fill: "rgba(148, 103, 189, 0.15)",
});

import { defineFaultKind, positiveFactor } from "../kind.ts";

/**
 * Threads (queue model) or limit (exponential model) × f; for the linear model every delay ÷ f:
 * a noisy neighbour, a CPU cut, a lost replica. Overlapping capacity faults multiply.
 */
export const capacity = defineFaultKind({
  name: "capacity",
  help: "capacity *f: threads or limit",
  factor: positiveFactor("capacity@10s+30s*0.5"),
  mechanism: "condition",
  condition: {
    bend: (conditions, factor) => ({ ...conditions, capacityFactor: conditions.capacityFactor * factor }),
    read: (conditions) => conditions.capacityFactor,
  },
  keepsServerDelays: false,
  injectsErrors: false,
  changesServiceTime: false,
  fill: "rgba(255, 127, 14, 0.15)",
});

import { defineFaultKind } from "../kind.ts";

/** This share of the requests served is answered 500 (a bad deploy); of overlapping errors faults the largest share wins. */
export const errors = defineFaultKind({
  name: "errors",
  help: "errors *p: share answered 500",
  factor: {
    check: (share) => share >= 0 && share <= 1,
    rule: "a share from 0 to 1, e.g. errors@10s+30s*0.2",
    label: (share) => `${Number((share * 100).toFixed(1))} %`,
  },
  mechanism: "condition",
  condition: {
    bend: (conditions, share) => ({ ...conditions, errorRate: Math.max(conditions.errorRate ?? 0, share) }),
    read: (conditions) => conditions.errorRate ?? 0,
  },
  keepsServerDelays: true,
  injectsErrors: true,
  changesServiceTime: false,
  fill: "rgba(227, 119, 194, 0.15)",
});

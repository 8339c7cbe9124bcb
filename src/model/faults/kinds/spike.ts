import { defineFaultKind } from "../kind.ts";

/** The clients' load × f: f − 1 times the users join (closed herd), or the arrival rate grows f-fold (open loop). */
export const spike = defineFaultKind({
  name: "spike",
  help: "spike *f: the clients' load",
  factor: { check: (factor) => factor > 1, rule: "a factor above 1, e.g. spike@60s+5s*2", label: (factor) => `×${factor}` },
  mechanism: "load",
  keepsServerDelays: true,
  injectsErrors: false,
  changesServiceTime: false,
  fill: "rgba(188, 189, 34, 0.18)",
});

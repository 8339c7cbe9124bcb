import { defineFaultKind } from "../kind.ts";

/** The server dies and is started again after the length: what was in it is lost, connections are refused while it is down. */
export const crash = defineFaultKind({
  name: "crash",
  help: "crash: lost work, refused connections",
  factor: undefined,
  mechanism: "restart",
  keepsServerDelays: false,
  injectsErrors: false,
  changesServiceTime: false,
  fill: "rgba(127, 0, 0, 0.18)",
});

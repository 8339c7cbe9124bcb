import { defineFaultKind } from "../kind.ts";

/** The server stopped (SIGSTOP) and resumed (SIGCONT): the article's outage, and the default trouble. */
export const stop = defineFaultKind({
  name: "stop",
  help: "stop: SIGSTOP",
  factor: undefined,
  mechanism: "pause",
  keepsServerDelays: false,
  injectsErrors: false,
  changesServiceTime: false,
  fill: "rgba(214, 39, 40, 0.15)",
});

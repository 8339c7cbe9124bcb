import type { FlagSpec } from "../cli/flags.ts";
import { MAX_ARRIVAL_RATE } from "../model/load.ts";
import { DEADLINE_HEADER } from "../model/protection-headers.ts";

/**
 * The client's flags for how load is offered (closed users or open-loop arrivals) and for
 * what it says to and hears from the server (its deadline, the server's Retry-After).
 */
export const LOAD_FLAGS = [
  {
    name: "arrivals",
    group: "system",
    kind: "string",
    default: "closed",
    choices: ["closed", "open"],
    placeholder: "model",
    description:
      "closed: -clients users, each waiting for its answer before it thinks and sends again; " +
      "open: requests arrive at -rate per second whatever became of earlier ones, each with its own retries",
  },
  {
    name: "rate",
    group: "system",
    kind: "number",
    default: undefined,
    min: 0,
    minExclusive: true,
    max: MAX_ARRIVAL_RATE,
    placeholder: "per-second",
    description: "with -arrivals open: mean arrivals per second (a Poisson process)",
  },
  {
    name: "max-chains",
    group: "system",
    kind: "integer",
    default: 100_000,
    min: 1,
    placeholder: "n",
    description:
      "with -arrivals open: most requests alive at once (an attempt in flight or a retry pending); " +
      "an arrival beyond is not sent and is counted as dropped",
  },
  {
    name: "honor-retry-after",
    group: "system",
    kind: "boolean",
    default: false,
    description: "wait at least what a server's Retry-After asks before the next attempt",
  },
  {
    name: "propagate-deadline",
    group: "protection",
    kind: "boolean",
    default: false,
    description: `send each attempt's deadline (send time + -timeout, Unix epoch ms) in the ${DEADLINE_HEADER} header`,
  },
] as const satisfies readonly FlagSpec[];

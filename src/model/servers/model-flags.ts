import { formatDuration } from "../../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../../cli/flags.ts";
import { UsageError } from "../../cli/usage-error.ts";
import type { ServerModelFigures } from "./figures.ts";
import {
  modelOf,
  SERVER_MODEL_DEFINITIONS,
  SERVER_MODEL_KINDS,
  serverModel,
  type ServerModelFlag,
  type ServerModelKind,
  type ServerModelSpec,
} from "./models.ts";

/** -model: which model, and each one's clause of the help. */
const MODEL_FLAG = {
  name: "model",
  group: "system",
  kind: "string",
  default: SERVER_MODEL_DEFINITIONS[0].name,
  choices: SERVER_MODEL_KINDS,
  placeholder: "name",
  description: `server model: ${SERVER_MODEL_DEFINITIONS.map((definition) => definition.help).join(", ")}`,
} as const satisfies FlagSpec;

const [DEFAULT_MODEL, ...OTHER_MODELS] = SERVER_MODEL_DEFINITIONS;

/**
 * The flags of the server models (src/model/servers/kinds), in the flag tables of ./server
 * and ./sim alike: the default model's first (the reference server's Go names, with their
 * defaults), then -model, then each other model's, as its definition lists them. The other
 * models' flags have no default in the table (it is in their descriptions), so that setting
 * one for a model that does not read it can be told from leaving it alone.
 */
export const MODEL_FLAGS: readonly (ServerModelFlag | typeof MODEL_FLAG)[] = [
  ...DEFAULT_MODEL.flags,
  MODEL_FLAG,
  ...OTHER_MODELS.flatMap((definition): readonly ServerModelFlag[] => definition.flags),
];

type ModelFlagValues = FlagValues<typeof MODEL_FLAGS> & { readonly "max-concurrency": number };

/** Flags some model reads, with their table defaults (-max-concurrency's 0 means off). */
const MODEL_FLAG_DEFAULTS = new Map<string, unknown>([
  ...MODEL_FLAGS.filter((flag) => flag !== MODEL_FLAG).map((flag) => [flag.name, flag.default] as const),
  ["max-concurrency", 0],
]);

/** The model the flag values describe; a UsageError for a flag the model does not read. */
export function resolveServerModel(values: ModelFlagValues): ServerModelSpec {
  const kind = values.model as ServerModelKind;
  const { reads } = serverModel(kind);
  for (const [name, fallback] of MODEL_FLAG_DEFAULTS) {
    if (reads.includes(name) || values[name as keyof ModelFlagValues] === fallback) continue;
    throw new UsageError(`-${name} does not apply to -model ${kind} (it takes ${reads.map((flag) => `-${flag}`).join(", ")})`);
  }
  return serverModel(kind).read(values);
}

/** The model and its parameters as flags would set them, e.g. `queue (8 threads, constant 20ms, fifo, unbounded queue)`. */
export function describeModelSpec(spec: ServerModelSpec): string {
  return modelOf(spec).describe(spec);
}

const rate = (perSec: number) => String(Number(perSec.toFixed(1)));

/**
 * One line: the model, its capacity and its tipping point, e.g. `model queue (…): capacity
 * 400 req/s (at 8 in the server); tipping point 799 in the server (…)`.
 */
export function describeModel(spec: ServerModelSpec, figures: ServerModelFigures, timeoutMs: number): string {
  const capacity = Number.isFinite(figures.capacityPerSec)
    ? `capacity ${rate(figures.capacityPerSec)} req/s (at ${figures.capacityAtConcurrency} in the server)`
    : "capacity unbounded (the delay never grows)";
  const tipping =
    figures.tippingConcurrency === undefined
      ? "no tipping point"
      : `tipping point ${figures.tippingConcurrency} in the server (a request's time there reaches a ${formatDuration(timeoutMs)} client timeout)`;
  return `model ${describeModelSpec(spec)}: ${capacity}; ${tipping}`;
}

/** Whether the model draws random numbers (and so needs a seed). */
export function modelDrawsRandom(spec: ServerModelSpec): boolean {
  return modelOf(spec).drawsRandom(spec);
}

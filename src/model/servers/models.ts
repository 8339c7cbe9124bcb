import type { Clock } from "../../clock/clock.ts";
import type { ServerModelFigures } from "./figures.ts";
import type { CommonServerOptions, MiddleTier, ServerModelDefinition } from "./kind.ts";
import { exponential } from "./kinds/exponential.ts";
import { linear } from "./kinds/linear.ts";
import { queue } from "./kinds/queue.ts";
import { usl } from "./kinds/usl.ts";
import type { ServerModel } from "./server-model.ts";

export type { CommonServerOptions } from "./kind.ts";

/**
 * Every server model, one definition each (src/model/servers/kinds/), the default first, in
 * the order -model's help lists them. A new model: its file, its test, and its line here
 * (docs/design.md).
 */
export const SERVER_MODEL_DEFINITIONS = [exponential, linear, queue, usl] as const;

type Definitions = (typeof SERVER_MODEL_DEFINITIONS)[number];
export type ServerModelKind = Definitions["name"];
/** Which model, with its own parameters. */
export type ServerModelSpec = Definitions extends infer Definition
  ? Definition extends { read(values: never): infer Spec }
    ? Spec
    : never
  : never;
/** The flags the models add to a server's flag table. */
export type ServerModelFlag = Definitions["flags"][number];

export const SERVER_MODEL_KINDS: readonly ServerModelKind[] = SERVER_MODEL_DEFINITIONS.map((definition) => definition.name);

/** What the registry's callers see of a definition: methods on any spec, values of every model flag. */
export type AnyServerModel = ServerModelDefinition<ServerModelKind, ServerModelSpec, readonly ServerModelFlag[], Record<string, unknown>>;

// Each definition's methods take its own spec only; the lookups below hand each the spec of its own kind.
const BY_NAME: ReadonlyMap<string, AnyServerModel> = new Map(
  SERVER_MODEL_DEFINITIONS.map((definition) => [definition.name, definition as unknown as AnyServerModel]),
);

/** A model's definition by its name: one the flags, or the type, have already checked. */
export function serverModel(name: ServerModelKind): AnyServerModel {
  return BY_NAME.get(name)!;
}

/** The definition of a spec's model. */
export function modelOf(spec: ServerModelSpec): AnyServerModel {
  return serverModel(spec.kind);
}

export function createServerModel(spec: ServerModelSpec, clock: Clock, options: CommonServerOptions): ServerModel {
  return modelOf(spec).create(spec, clock, options);
}

export function modelFigures(spec: ServerModelSpec, timeoutMs: number, maxConcurrency = Infinity): ServerModelFigures {
  return modelOf(spec).figures(spec, timeoutMs, maxConcurrency);
}

/** How a spec's model serves as a middle tier; undefined where it cannot be one. */
export function middleTierOf(spec: ServerModelSpec): MiddleTier<ServerModelSpec> | undefined {
  return modelOf(spec).middleTier;
}

/** The models that can be a middle tier, by name. */
export const MIDDLE_TIER_MODELS: readonly ServerModelKind[] = SERVER_MODEL_DEFINITIONS.flatMap((definition) =>
  definition.middleTier === undefined ? [] : [definition.name],
);

import { modelOf, type ServerModelSpec } from "../model/servers/models.ts";

/**
 * A fitted model (rounded: fit-models.ts) as the flags of ./server and ./sim say it, in flag order: what a scenario
 * file's `system` section holds and what -validate starts ./server with.
 */
export function modelSettings(spec: ServerModelSpec): Record<string, string | number> {
  return modelOf(spec).settings(spec);
}

/** The same as command-line arguments: `-model queue -threads 4 …`. */
export function modelArgs(spec: ServerModelSpec): string[] {
  return Object.entries(modelSettings(spec)).flatMap(([name, value]) => [`-${name}`, String(value)]);
}

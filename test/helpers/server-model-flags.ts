import type { ServerModelSpec } from "../../src/model/servers/models.ts";
import { serverModelOf } from "../../src/config/server-system.ts";
import { parseServerArgs, resolveServerOptions } from "../../src/options/server.ts";

/** The model ./server's flags describe, read as ./server reads them. */
export function serverModelFromArgs(args: readonly string[]): ServerModelSpec {
  const parsed = parseServerArgs(args);
  if (parsed.kind !== "run") throw new Error("help");
  return serverModelOf(resolveServerOptions(parsed.values));
}

/** A model's flag settings (its definition's `settings`) as ./server's arguments. */
export function settingsArgs(settings: Record<string, string | number>): string[] {
  return Object.entries(settings).flatMap(([name, value]) => [`-${name}`, String(value)]);
}

import { formatDuration } from "../cli/duration.ts";
import { type FlagSpec, parseValue } from "../cli/flags.ts";
import { LOAD_CONFIG_FLAGS } from "../config/load.ts";
import { SERVER_SYSTEM_FLAGS } from "../config/server-system.ts";
import { parseSimulationArgs, SIMULATION_FLAGS, type SimulationFlagValues } from "../config/simulation.ts";

/*
 * A candidate is data: the flag values it sets, as a user would type them. The same
 * settings drive the simulator (through its own flag table, so every rule of ./sim
 * applies) and, with -validate, the real ./client and ./server.
 */

/** Flag name to the value as typed (`"3"`, `"1s"`, `"true"`), in the order they were set. */
export type FlagSettings = Readonly<Record<string, string>>;

/** The simulator's flags by name: what a candidate may set. */
export const SIM_FLAG_SPECS: ReadonlyMap<string, FlagSpec> = new Map(
  (SIMULATION_FLAGS as readonly FlagSpec[]).map((flag) => [flag.name, flag]),
);

/** What ./client reads of a candidate (its load: the users and their policy) and what ./server reads (the server itself). */
const CLIENT_FLAG_NAMES = new Set((LOAD_CONFIG_FLAGS as readonly FlagSpec[]).map((flag) => flag.name));
const SERVER_FLAG_NAMES = new Set((SERVER_SYSTEM_FLAGS as readonly FlagSpec[]).map((flag) => flag.name));

/** The simulator's defaults, as parsed values. */
export function simDefaults(): SimulationFlagValues {
  const parsed = parseSimulationArgs([]);
  if (parsed.kind !== "run") throw new Error("unreachable: no arguments asked for help");
  return parsed.values;
}

/**
 * The simulator's flag values for a system and the settings laid over it, later settings
 * winning. Each setting is parsed by its flag's own rule; a flag this simulator does not
 * have is an Error naming it.
 */
export function simValuesFor(system: Readonly<Record<string, unknown>>, ...layers: readonly FlagSettings[]): SimulationFlagValues {
  const values: Record<string, unknown> = { ...simDefaults(), ...system };
  for (const layer of layers) {
    for (const [name, raw] of Object.entries(layer)) {
      const spec = SIM_FLAG_SPECS.get(name);
      if (spec === undefined) throw new Error(`this simulator has no flag -${name}`);
      values[name] = parseValue(spec, raw);
    }
  }
  return values as SimulationFlagValues;
}

/** A parsed value back in command-line form. */
export function formatFlagValue(spec: FlagSpec, value: unknown): string {
  if (spec.kind === "duration" && typeof value === "number") return formatDuration(value);
  return String(value);
}

/** Settings as command-line arguments, `-name value`; a true boolean as `-name`, a false one as `-name=false`. */
export function settingsToArgs(settings: FlagSettings): string[] {
  return Object.entries(settings).flatMap(([name, value]) => {
    const spec = SIM_FLAG_SPECS.get(name);
    if (spec?.kind === "boolean") return value === "true" ? [`-${name}`] : [`-${name}=${value}`];
    return [`-${name}`, value];
  });
}

/** The settings a program takes: the client's flags or the server's. */
export function settingsFor(program: "client" | "server", settings: FlagSettings): FlagSettings {
  const names = program === "client" ? CLIENT_FLAG_NAMES : SERVER_FLAG_NAMES;
  return Object.fromEntries(Object.entries(settings).filter(([name]) => names.has(name)));
}

/** Settings that neither real program takes (simulator-only flags). */
export function simulatorOnly(settings: FlagSettings): string[] {
  return Object.keys(settings).filter((name) => !CLIENT_FLAG_NAMES.has(name) && !SERVER_FLAG_NAMES.has(name));
}

/** Parsed system values as settings, leaving out those equal to the simulator's defaults. */
export function systemSettings(system: Readonly<Record<string, unknown>>): FlagSettings {
  const defaults = simDefaults() as Record<string, unknown>;
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(system)) {
    const spec = SIM_FLAG_SPECS.get(name);
    if (spec === undefined || value === undefined || value === defaults[name]) continue;
    settings[name] = formatFlagValue(spec, value);
  }
  return settings;
}

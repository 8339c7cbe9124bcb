import type { FlagSpec } from "../cli/flags.ts";
import * as registry from "../strategies/registry.ts";
import type { RegistryView } from "./candidates.ts";
import { formatFlagValue, type FlagSettings } from "./settings.ts";

/*
 * What the grid reads of the strategy registry: its strategies with their parameters, and
 * its presets. Presets are read from whatever the registry exports under a name ending in
 * PRESETS (an array of { name, summary?, and the flags it sets as `flags`, `values`,
 * `settings` or `client` (name to value), or `args` / `clientArgs` (argv) }), and from the
 * choices of a -preset flag, so that presets added to the registry join the grid as data.
 */

type Loose = Readonly<Record<string, unknown>>;

/** Choices of a -preset flag that mean "no preset". */
const NOT_A_PRESET = new Set(["", "none", "off"]);

const isRecord = (value: unknown): value is Loose => typeof value === "object" && value !== null && !Array.isArray(value);

export function registryView(flags: ReadonlyMap<string, FlagSpec>, module: Loose = registry as unknown as Loose): RegistryView {
  const strategies = Array.isArray(module.STRATEGIES)
    ? (module.STRATEGIES as unknown[]).filter(isRecord).map((strategy) => ({
        name: String(strategy.name),
        parameters: isRecord(strategy.parameters) ? (strategy.parameters as Readonly<Record<string, string>>) : {},
      }))
    : [];
  const strategyNames = new Set(strategies.map((strategy) => strategy.name));
  const presets: { name: string; summary: string; client: FlagSettings }[] = [];
  for (const [exportName, value] of Object.entries(module)) {
    if (!/PRESETS$/i.test(exportName) || !Array.isArray(value)) continue;
    for (const entry of value as unknown[]) {
      if (!isRecord(entry) || typeof entry.name !== "string") continue;
      const client = presetSettings(entry, flags);
      if (client === undefined) continue;
      presets.push({ name: entry.name, summary: typeof entry.summary === "string" ? entry.summary : `preset ${entry.name}`, client });
    }
  }
  const presetFlag = flags.get("preset");
  if (presetFlag?.kind === "string") {
    for (const choice of presetFlag.choices ?? []) {
      if (NOT_A_PRESET.has(choice) || presets.some((preset) => preset.name === choice) || strategyNames.has(choice)) continue;
      presets.push({ name: choice, summary: `preset ${choice} (-preset ${choice})`, client: { preset: choice } });
    }
  }
  return { strategies, presets };
}

/** The flags a preset entry sets, or undefined if it names none in a form this reader knows. */
function presetSettings(entry: Loose, flags: ReadonlyMap<string, FlagSpec>): FlagSettings | undefined {
  for (const key of ["flags", "values", "settings", "client"]) {
    const value = entry[key];
    if (!isRecord(value)) continue;
    const settings: Record<string, string> = {};
    for (const [name, raw] of Object.entries(value)) {
      if (raw === undefined) continue;
      const spec = flags.get(name);
      settings[name] = spec === undefined || typeof raw === "string" ? String(raw) : formatFlagValue(spec, raw);
    }
    return settings;
  }
  for (const key of ["args", "clientArgs"]) {
    const value = entry[key];
    if (Array.isArray(value) && value.every((item) => typeof item === "string")) return argsToSettings(value as string[], flags);
  }
  return undefined;
}

/** Go-style argv (`-a 1`, `-a=1`, `--a 1`, `-flag` for a boolean) as settings. */
export function argsToSettings(args: readonly string[], flags: ReadonlyMap<string, FlagSpec>): FlagSettings {
  const settings: Record<string, string> = {};
  for (let index = 0; index < args.length; index++) {
    const match = /^--?([^=]+)(?:=(.*))?$/.exec(args[index]!);
    if (match === null) continue;
    const name = match[1]!;
    if (match[2] !== undefined) settings[name] = match[2];
    else if (flags.get(name)?.kind === "boolean") settings[name] = "true";
    else settings[name] = args[++index] ?? "";
  }
  return settings;
}

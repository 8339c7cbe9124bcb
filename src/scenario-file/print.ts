import { formatDuration } from "../cli/duration.ts";
import type { FlagSpec } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { TIER_SYSTEM_FLAGS, type ScenarioTier, UPSTREAM_FLAGS } from "./tiers.ts";
import { FAULTS_KEY, SCENARIO_SECTIONS, SCENARIO_VERSION, type ScenarioMetadata, sectionOf, WORKLOAD_KEY } from "./format.ts";
import { type ScenarioTarget, workloadOf } from "../options/scenario-target.ts";

/** Parsed flag values, keyed by flag name, as parseFlags returns them. */
export type FlagValueMap = Readonly<Record<string, unknown>>;

/**
 * The scenario file that a program's flags mean (-print-scenario): `scenario: 1`, the metadata
 * of the file it read (if any), the workload unless it is the default `requests`, then per
 * section the flags whose value is not the default, in the flag table's order. `carried` holds,
 * per carrying flag (demo: "server-args"), the parsed values of the flags it passes. Reading the output back gives the same flags.
 */
export async function printScenario(
  target: ScenarioTarget,
  values: FlagValueMap,
  carried: Readonly<Record<string, FlagValueMap>> = {},
  metadata: ScenarioMetadata = {},
  tiers: readonly ScenarioTier[] = [],
): Promise<string> {
  const carriers = new Set((target.passThrough ?? []).map((pass) => pass.flag));
  const tables = [
    { flags: target.flags.filter((flag) => !carriers.has(flag.name)), values, from: target.program },
    ...(target.passThrough ?? []).map((pass) => ({ flags: pass.flags, values: carried[pass.flag] ?? {}, from: `-${pass.flag}` })),
  ];
  const sections = new Map(SCENARIO_SECTIONS.map((section) => [section, new Map<string, { value: unknown; from: string }>()]));
  for (const table of tables) {
    for (const flag of table.flags) {
      const section = sectionOf(flag);
      const value = table.values[flag.name];
      // The workload is the file's top-level key, written below, not a section's flag.
      if (flag.name === WORKLOAD_KEY || section === undefined || value === undefined || value === flag.default) continue;
      const written = fileValue(flag, value);
      const earlier = sections.get(section)!.get(flag.name);
      if (earlier !== undefined && JSON.stringify(earlier.value) !== JSON.stringify(written)) {
        throw new UsageError(
          `-print-scenario: -${flag.name} is ${JSON.stringify(earlier.value)} in ${earlier.from} and ${JSON.stringify(written)} in ${table.from}; ` +
            "a scenario file gives it one value",
        );
      }
      sections.get(section)!.set(flag.name, { value: written, from: table.from });
    }
  }
  const workload = workloadOf(target);
  const file: Record<string, unknown> = {
    scenario: SCENARIO_VERSION,
    ...metadata,
    ...(workload === "requests" ? {} : { [WORKLOAD_KEY]: workload }),
  };
  for (const [section, keys] of sections) {
    if (keys.size === 0) continue;
    file[section] =
      section === "faults" ? keys.get(FAULTS_KEY)!.value : Object.fromEntries([...keys].map(([name, { value }]) => [name, value]));
  }
  if (tiers.length > 0) file.tiers = tiers.map(writtenTier);
  const { stringify } = await import("yaml");
  return stringify(file, { lineWidth: 0 });
}

/** A flag's value as a file writes it: a duration as Go text, the fault schedule as a list. */
function fileValue(flag: FlagSpec, value: unknown): unknown {
  if (flag.kind === "duration") return formatDuration(value as number);
  if (flag.name === FAULTS_KEY) {
    return String(value)
      .split(",")
      .map((fault) => fault.trim())
      .filter((fault) => fault !== "");
  }
  return value;
}

/** A tier as its file wrote it, each value typed as its flag reads it back (a number as a number). */
function writtenTier(tier: ScenarioTier): Record<string, unknown> {
  const typed = (flags: readonly FlagSpec[], values: Readonly<Record<string, string>>) =>
    Object.fromEntries(
      Object.entries(values).map(([name, text]) => {
        const kind = flags.find((flag) => flag.name === name)!.kind;
        return [name, kind === "integer" || kind === "number" ? Number(text) : kind === "boolean" ? text === "true" : text];
      }),
    );
  const system = typed(TIER_SYSTEM_FLAGS, tier.written.system);
  const upstream = typed(UPSTREAM_FLAGS, tier.written.upstream);
  return {
    name: tier.name,
    ...(Object.keys(system).length === 0 ? {} : { system }),
    ...(Object.keys(upstream).length === 0 ? {} : { upstream }),
    ...(tier.fanout === 1 ? {} : { fanout: tier.fanout }),
  };
}

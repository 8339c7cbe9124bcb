import type { z as Zod } from "zod";
import { type FlagSpec, parseValue } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { WORKLOADS } from "../cli/workload.ts";
import { MAX_FAULTS, TIER_NAME_PATTERN, TOO_MANY_FAULTS } from "../model/faults/fault-schedule.ts";
import { MAX_FANOUT, MAX_TIERS, TIER_SYSTEM_FLAGS, UPSTREAM_FLAGS } from "./tiers.ts";
import { FAULTS_KEY, SCENARIO_SECTIONS, SCENARIO_VERSION, type ScenarioSection, sectionOf, WORKLOAD_KEY } from "./format.ts";
import type { ScenarioTarget } from "../options/scenario-target.ts";

/** zod's namespace, passed in: the caller imports it only when there is a file to read. */
type Z = typeof Zod;

/** What a file key turns into: the flag's text, as typed on a command line. */
export type SectionValues = Record<string, string>;

/** The keys a file may hold in one section, for one program: its own flags first, then the other programs'. */
export interface SectionKey {
  readonly flag: FlagSpec;
  /** The carrying flags when the program passes it through (demo: "server-args"; both for -seed), else none. */
  readonly carriers: readonly string[];
  /** Whether this program takes it at all (else it is another program's, and ignored). */
  readonly taken: boolean;
}

/** Every key of every section, as the target reads it; keys other targets take are known too. */
export function sectionKeys(target: ScenarioTarget, others: readonly ScenarioTarget[]): Map<ScenarioSection, Map<string, SectionKey>> {
  // A carrying flag is never a key: the flags it carries are, in their own sections.
  const carriers = new Set(carrierNames([target, ...others]));
  const sections = new Map<ScenarioSection, Map<string, SectionKey>>(SCENARIO_SECTIONS.map((section) => [section, new Map()]));
  const add = (flag: FlagSpec, carrier: string | undefined, taken: boolean) => {
    const section = sectionOf(flag);
    // The workload is a top-level key, not a section's: it decides which sections there are.
    if (section === undefined || carriers.has(flag.name) || flag.name === WORKLOAD_KEY) return;
    const keys = sections.get(section)!;
    const known = keys.get(flag.name);
    const carried = carrier === undefined ? [] : [carrier];
    if (known === undefined) keys.set(flag.name, { flag, carriers: carried, taken });
    else if (taken && known.carriers.length > 0 && carrier !== undefined)
      keys.set(flag.name, { ...known, carriers: [...known.carriers, carrier] });
  };
  for (const flag of target.flags) add(flag, undefined, true);
  for (const pass of target.passThrough ?? []) for (const flag of pass.flags) add(flag, pass.flag, true);
  for (const other of others) {
    if (other.program === target.program) continue;
    for (const flag of [...other.flags, ...(other.passThrough ?? []).flatMap((pass) => pass.flags)]) {
      add(flag, undefined, false);
    }
  }
  return sections;
}

/** The flags that carry another program's flags (the demo's -server-args, -client-args). */
export function carrierNames(targets: readonly ScenarioTarget[]): string[] {
  return targets.flatMap((target) => (target.passThrough ?? []).map((pass) => pass.flag));
}

/** A flag's rule as parseValue words it, without the flag's name (the file's message names the key). */
export function valueProblem(flag: FlagSpec, text: string): string | undefined {
  try {
    parseValue(flag, text);
    return undefined;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return error.message.replace(` for flag -${flag.name}`, "");
  }
}

const KIND_WORDS: Readonly<Record<FlagSpec["kind"], string>> = {
  boolean: "must be true or false",
  integer: "must be an integer",
  number: "must be a number",
  duration: "must be a duration such as 300ms, 1.5s or 2m",
  string: "must be a string, or a list of strings",
};

/** One key's schema: the YAML value a flag takes, checked by the flag's own rule, out as the flag's text. */
function keySchema(z: Z, key: SectionKey) {
  const { flag } = key;
  const error = KIND_WORDS[flag.kind];
  const scalar = z.union([z.string(), z.number()], { error });
  const base =
    flag.kind === "boolean"
      ? z.boolean({ error })
      : flag.kind === "integer" || flag.kind === "number"
        ? z.number({ error })
        : flag.kind === "duration"
          ? scalar
          : z.union([scalar, z.array(scalar)], { error });
  const problem = (text: string) =>
    valueProblem(flag, text) ?? (key.carriers.length > 0 && /\s/.test(text) ? spacesProblem(key.carriers[0]!) : undefined);
  return base.transform((value, ctx) => {
    const check = (item: string | number | boolean, path: PropertyKey[]) => {
      const text = String(item);
      const message = problem(text);
      if (message !== undefined) ctx.addIssue({ code: "custom", message, input: item, path });
      return text;
    };
    if (!Array.isArray(value)) return check(value, []);
    // A list is the flag's comma-separated text; a fault is checked alone, so that an error names its own line.
    if (flag.name === FAULTS_KEY) {
      // Past the limit, the first fault too many is the line named.
      if (value.length > MAX_FAULTS) ctx.addIssue({ code: "custom", message: TOO_MANY_FAULTS, input: value, path: [MAX_FAULTS] });
      return value.map((item, index) => check(item, [index])).join(",");
    }
    return check(value.join(","), []);
  });
}

const FANOUT_RULE = `must be an integer from 1 to ${MAX_FANOUT}`;

const spacesProblem = (carrier: string) => `must not contain spaces: it is passed to another program in -${carrier}`;

/** The whole file's schema for one program: metadata, and each section's keys with their flags' rules. */
export function scenarioSchema(z: Z, sections: Map<ScenarioSection, Map<string, SectionKey>>) {
  const sectionShape = (keys: Map<string, SectionKey>) =>
    z
      .strictObject(Object.fromEntries([...keys].map(([name, key]) => [name, keySchema(z, key).optional()])), {
        error: "must be a mapping of flag names to values",
      })
      .nullable()
      .transform((value) => (value ?? {}) as SectionValues);
  const faultsKey = sections.get("faults")!.get(FAULTS_KEY);
  const text = z.string({ error: "must be text" });
  const flagKeys = (flags: readonly FlagSpec[]) => new Map(flags.map((flag) => [flag.name, { flag, carriers: [], taken: true }]));
  const tier = z.strictObject(
    {
      name: z
        .string({ error: "must be a tier's name" })
        .regex(TIER_NAME_PATTERN, { error: "must be a name of lower-case letters, digits, - and _" }),
      system: sectionShape(flagKeys(TIER_SYSTEM_FLAGS)).optional(),
      upstream: sectionShape(flagKeys(UPSTREAM_FLAGS)).optional(),
      // A tier's calls per request, as ./server's -upstream-fanout takes them.
      fanout: z
        .number({ error: FANOUT_RULE })
        .int({ error: FANOUT_RULE })
        .min(1, { error: FANOUT_RULE })
        .max(MAX_FANOUT, { error: FANOUT_RULE })
        .optional(),
    },
    { error: "must be a mapping: name, system, upstream, fanout" },
  );
  return z.strictObject({
    scenario: z.literal(SCENARIO_VERSION, {
      error: (issue) =>
        issue.input === undefined
          ? `missing: a scenario file names its format, scenario: ${SCENARIO_VERSION}`
          : `must be ${SCENARIO_VERSION}, the format version`,
    }),
    name: text.optional(),
    description: text.optional(),
    source: z
      .strictObject(
        { title: text.optional(), url: z.url({ error: "must be a URL" }).optional(), date: text.optional() },
        { error: "must be a mapping: title, url, date" },
      )
      .optional(),
    published: text.optional(),
    measured: measuredShape(z, text).optional(),
    [WORKLOAD_KEY]: z.enum(WORKLOADS, { error: `must be one of ${WORKLOADS.join(", ")}` }).optional(),
    system: sectionShape(sections.get("system")!).optional(),
    strategy: sectionShape(sections.get("strategy")!).optional(),
    protection: sectionShape(sections.get("protection")!).optional(),
    faults: (faultsKey === undefined ? z.never() : keySchema(z, faultsKey)).optional(),
    observation: sectionShape(sections.get("observation")!).optional(),
    run: sectionShape(sections.get("run")!).optional(),
    tiers: z
      .array(tier, { error: "must be a list of tiers, the edge first" })
      .min(2, { error: "a chain has at least two tiers" })
      .superRefine((tiers, ctx) => {
        // Named at the first tier too many.
        if (tiers.length > MAX_TIERS)
          ctx.addIssue({ code: "custom", message: `a chain has at most ${MAX_TIERS} tiers`, path: [MAX_TIERS] });
      })
      .optional(),
  });
}

export type ScenarioData = Zod.output<ReturnType<typeof scenarioSchema>>;

/** The keys of `measured:`, each a count unless named here. */
const MEASURED_TEXT = ["date", "baseline-p50", "recovery"] as const;
const MEASURED_RATES = ["capacity", "overload-rate"] as const;
const MEASURED_COUNTS = [
  "overload-requests",
  "served",
  "shed",
  "errors",
  "held-past-timeout",
  "connect-timeout",
  "refused",
  "reset",
  "probe-limit",
  "held-at-most",
] as const;

export const MEASURED_KEYS = [...MEASURED_TEXT, ...MEASURED_RATES, ...MEASURED_COUNTS, "held-at-excess", "work-for-nobody"];

/** probe's record of a service past saturation (MeasuredPastSaturation): strict, so a typo is named; any key may be left out. */
function measuredShape(z: Z, text: Zod.ZodString) {
  const count = z.number({ error: "must be a count" }).int({ error: "must be a count" }).min(0, { error: "must be a count" });
  const rate = z.number({ error: "must be a number of requests per second" }).min(0, { error: "must be >= 0" });
  return z.strictObject(
    {
      ...Object.fromEntries(MEASURED_TEXT.map((key) => [key, text.optional()])),
      ...Object.fromEntries(MEASURED_RATES.map((key) => [key, rate.optional()])),
      ...Object.fromEntries(MEASURED_COUNTS.map((key) => [key, count.optional()])),
      "held-at-excess": count.optional(),
      "work-for-nobody": z
        .number({ error: "must be a share from 0 to 1" })
        .min(0)
        .max(1, { error: "must be a share from 0 to 1" })
        .optional(),
    } as Record<(typeof MEASURED_TEXT)[number], Zod.ZodOptional<Zod.ZodString>> &
      Record<
        (typeof MEASURED_RATES)[number] | (typeof MEASURED_COUNTS)[number] | "held-at-excess" | "work-for-nobody",
        Zod.ZodOptional<Zod.ZodNumber>
      >,
    {
      error: `must be a mapping: ${[...MEASURED_TEXT, ...MEASURED_RATES, ...MEASURED_COUNTS, "held-at-excess", "work-for-nobody"].join(", ")}`,
    },
  );
}

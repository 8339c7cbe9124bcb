import { Command, CommanderError, Option } from "commander";
import { HELP_TOKEN, normalizeArgv, parseGoBool, splitArguments } from "./argv.ts";
import { DurationSyntaxError, formatDuration, parseDuration } from "./duration.ts";
import { redactCredentials } from "./redact-url.ts";
import { excerpt, UsageError } from "./usage-error.ts";

/**
 * What a flag is about, so that a program can take another's flags by kind (choose takes
 * ./sim's system and observation flags) rather than by a list of names kept by hand:
 * - system: the system under test: the load the clients offer and the server they meet;
 * - strategy: the retry strategy, its parameters and the attempt limit;
 * - protection: fleet-level protections (budgets, throttle, breaker) and the deadline a client sends;
 * - observation: how the programs measure: their reporting windows;
 * - run: how one run goes: where, how long, which seed, outages, threads, what it compares;
 * - output: what is printed or written, and where.
 */
export const FLAG_GROUPS = ["system", "strategy", "protection", "observation", "run", "output"] as const;
export type FlagGroup = (typeof FLAG_GROUPS)[number];

interface FlagCommon {
  /** Go-style name, used as `-name`; also the key of the parsed value. */
  readonly name: string;
  readonly group: FlagGroup;
  readonly description: string;
  /** Word shown in help after the flag, e.g. `-clients n`. */
  readonly placeholder?: string;
}

export interface BooleanFlag extends FlagCommon {
  readonly kind: "boolean";
  readonly default: boolean;
}
export interface IntegerFlag extends FlagCommon {
  readonly kind: "integer";
  readonly default: number | undefined;
  readonly min?: number;
  readonly max?: number;
}
export interface NumberFlag extends FlagCommon {
  readonly kind: "number";
  readonly default: number | undefined;
  readonly min?: number;
  readonly max?: number;
  /** When true, `min` itself is not allowed. */
  readonly minExclusive?: boolean;
}
/** Go duration syntax on the command line, milliseconds inside. */
export interface DurationFlag extends FlagCommon {
  readonly kind: "duration";
  readonly default: number | undefined;
  readonly minMs?: number;
  readonly minExclusive?: boolean;
  readonly maxMs?: number;
}
export interface StringFlag extends FlagCommon {
  readonly kind: "string";
  readonly default: string | undefined;
  readonly choices?: readonly string[];
  /** Returns what is wrong with the value, or undefined when it is fine. */
  readonly check?: (value: string) => string | undefined;
}

export type FlagSpec = BooleanFlag | IntegerFlag | NumberFlag | DurationFlag | StringFlag;

type BaseValue<S> = S extends { kind: "boolean" } ? boolean : S extends { kind: "string" } ? string : number;
type ValueOf<S extends FlagSpec> = undefined extends S["default"] ? BaseValue<S> | undefined : BaseValue<S>;

/** The parsed values of a flag table, keyed by flag name. */
export type FlagValues<T extends readonly FlagSpec[]> = {
  -readonly [S in T[number] as S["name"]]: ValueOf<S>;
};

export interface ProgramDescription<T extends readonly FlagSpec[]> {
  readonly name: string;
  readonly summary: string;
  readonly flags: T;
  /** Printed after the flags in help, e.g. a list of strategies. */
  readonly epilog?: string;
  /** For a program that takes arguments after its flags: how usage names them, e.g. "file…". */
  readonly arguments?: string;
}

export type ParseOutcome<T extends readonly FlagSpec[]> =
  | { readonly kind: "run"; readonly values: FlagValues<T>; readonly args: readonly string[] }
  | { readonly kind: "help"; readonly text: string };

/**
 * Parses Go-style arguments against a flag table. Help (`-h`, `-help`, `--help`) comes
 * back as text for the caller to print; every mistake throws a UsageError naming the
 * flag, the value and the rule.
 */
export function parseFlags<T extends readonly FlagSpec[]>(program: ProgramDescription<T>, args: readonly string[]): ParseOutcome<T> {
  const split = program.arguments === undefined ? { flags: args, rest: [] } : splitArguments(args, program.flags);
  const normalized = normalizeArgv(split.flags, program.flags);
  const command = buildCommand(program);
  let helpText = "";
  command.configureOutput({
    writeOut: (text) => {
      helpText += text;
    },
    writeErr: () => {},
    outputError: () => {},
  });
  try {
    command.parse(normalized, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError && error.code === "commander.helpDisplayed") {
      return { kind: "help", text: helpText };
    }
    if (error instanceof CommanderError) throw new UsageError(error.message.replace(/^error: /, ""));
    throw error;
  }
  if (normalized.includes(HELP_TOKEN)) return { kind: "help", text: helpText };
  const parsed = command.opts();
  const values: Record<string, unknown> = {};
  for (const flag of program.flags) values[flag.name] = parsed[attributeName(flag.name)];
  return { kind: "run", values: values as FlagValues<T>, args: split.rest };
}

function buildCommand(program: ProgramDescription<readonly FlagSpec[]>): Command {
  const command = new Command(program.name)
    .description(program.summary)
    .usage(program.arguments === undefined ? "[flags]" : `[flags] ${program.arguments}`)
    .optionsGroup("Flags:")
    .helpOption("-h, --help", "print this help and exit")
    .exitOverride()
    .allowExcessArguments(false)
    // Wide enough that a flag's description and default never wrap apart.
    .configureHelp({ helpWidth: 200, optionTerm: goStyleTerm });
  for (const flag of program.flags) {
    const valuePart = flag.kind === "boolean" ? "[bool]" : `<${flag.placeholder ?? defaultPlaceholder(flag)}>`;
    const option = new Option(`--${flag.name} ${valuePart}`, flag.description).argParser((raw: string) => parseValue(flag, raw));
    if (flag.default !== undefined) option.default(flag.default, describeDefault(flag));
    command.addOption(option);
  }
  if (program.epilog !== undefined) command.addHelpText("after", `\n${program.epilog}`);
  return command;
}

/** Help shows flags as a Go user types them: `-clients n`. */
function goStyleTerm(option: Option): string {
  if (option.long === "--help") return "-h, -help";
  const name = (option.long ?? "").replace(/^--/, "");
  const placeholder = /<(.+)>/.exec(option.flags)?.[1];
  return placeholder === undefined ? `-${name}` : `-${name} ${placeholder}`;
}

function attributeName(flagName: string): string {
  return new Option(`--${flagName}`).attributeName();
}

function defaultPlaceholder(flag: FlagSpec): string {
  switch (flag.kind) {
    case "integer":
      return "int";
    case "number":
      return "float";
    case "duration":
      return "duration";
    default:
      return "string";
  }
}

function describeDefault(flag: FlagSpec): string {
  if (flag.kind === "duration" && flag.default !== undefined) return formatDuration(flag.default);
  if (flag.kind === "string") return JSON.stringify(flag.default);
  return String(flag.default);
}

/**
 * Why a number cannot be taken as written: an integer past 2^53 − 1 (a double rounds it: 10^23
 * would read as 1e+23), or a number past the largest double (it would read as Infinity).
 */
export const OUT_OF_RANGE = {
  integer: `out of range: an integer is at most ${Number.MAX_SAFE_INTEGER} in size`,
  number: `out of range: a number is at most ${Number.MAX_VALUE} in size`,
} as const;

/** A value refused, quoted with any URL's user name and password hidden (-url, -upstream). */
function invalid(flag: FlagSpec, raw: string, rule: string): UsageError {
  return new UsageError(`invalid value "${excerpt(redactCredentials(raw))}" for flag -${flag.name}: ${rule}`);
}

/** Converts one raw value, enforcing the flag's rule. Exported for tests. */
export function parseValue(flag: FlagSpec, raw: string): boolean | number | string {
  switch (flag.kind) {
    case "boolean": {
      const value = parseGoBool(raw);
      if (value === undefined) throw invalid(flag, raw, "must be true or false");
      return value;
    }
    case "integer": {
      if (!/^[-+]?\d+$/.test(raw)) throw invalid(flag, raw, "must be an integer");
      const value = Number(raw);
      if (!Number.isSafeInteger(value)) throw invalid(flag, raw, OUT_OF_RANGE.integer);
      checkRange(flag, raw, value, flag.min, flag.max, false, String);
      return value;
    }
    case "number": {
      const value = raw.trim() === "" ? Number.NaN : Number(raw);
      // A number written in digits that a double cannot hold: not "Infinity", which is no number at all.
      if (Math.abs(value) === Infinity && /\d/.test(raw)) throw invalid(flag, raw, OUT_OF_RANGE.number);
      if (!Number.isFinite(value)) throw invalid(flag, raw, "must be a finite number");
      checkRange(flag, raw, value, flag.min, flag.max, flag.minExclusive ?? false, String);
      return value;
    }
    case "duration": {
      let value: number;
      try {
        value = parseDuration(raw);
      } catch (error) {
        if (!(error instanceof DurationSyntaxError)) throw error;
        throw invalid(flag, raw, "must be a duration such as 300ms, 1.5s, 2m or 1h2m3s");
      }
      checkRange(flag, raw, value, flag.minMs, flag.maxMs, flag.minExclusive ?? false, formatDuration);
      return value;
    }
    case "string": {
      if (flag.choices !== undefined && !flag.choices.includes(raw)) {
        throw invalid(flag, raw, `must be one of ${flag.choices.join(", ")}`);
      }
      const problem = flag.check?.(raw);
      if (problem !== undefined) throw invalid(flag, raw, problem);
      return raw;
    }
  }
}

function checkRange(
  flag: FlagSpec,
  raw: string,
  value: number,
  min: number | undefined,
  max: number | undefined,
  minExclusive: boolean,
  show: (value: number) => string,
): void {
  if (min !== undefined && (minExclusive ? value <= min : value < min)) {
    throw invalid(flag, raw, `must be ${minExclusive ? ">" : ">="} ${show(min)}`);
  }
  if (max !== undefined && value > max) throw invalid(flag, raw, `must be <= ${show(max)}`);
}

/** Every program takes it: unexpected errors then print their stack (also THUNDERING_HERD_DEBUG=1). */
export const DEBUG_FLAG = {
  name: "debug",
  group: "output",
  kind: "boolean",
  default: false,
  description: "print the stack of an unexpected error (also THUNDERING_HERD_DEBUG=1)",
} as const satisfies BooleanFlag;

/** A flag table without some of its flags, keeping the types of the rest (for programs that combine tables). */
export function withoutFlags<T extends readonly FlagSpec[], N extends T[number]["name"]>(
  flags: T,
  names: readonly N[],
): Exclude<T[number], { name: N }>[] {
  return flags.filter((flag) => !(names as readonly string[]).includes(flag.name)) as Exclude<T[number], { name: N }>[];
}

/** The flags of a table in some groups, in the table's order. */
export function flagsInGroups<T extends readonly FlagSpec[], G extends FlagGroup>(
  flags: T,
  groups: readonly G[],
): Extract<T[number], { group: G }>[] {
  return flags.filter((flag) => (groups as readonly FlagGroup[]).includes(flag.group)) as Extract<T[number], { group: G }>[];
}

/**
 * Flag name to value as typed, from Go-style arguments read by the command line's own rules
 * (`-name value`, `-name=value`, a bare boolean as "true"); a flag given twice keeps its last value.
 */
export function argsToSettings(args: readonly string[], flags: readonly FlagSpec[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const token of normalizeArgv(args, flags)) {
    if (token === HELP_TOKEN) continue;
    const equals = token.indexOf("=");
    settings[token.slice(2, equals)] = token.slice(equals + 1);
  }
  return settings;
}

/** The names of the flags an argument list sets, e.g. for letting them win over presets. */
export function givenFlagNames(args: readonly string[], flags: readonly FlagSpec[]): Set<string> {
  return new Set(Object.keys(argsToSettings(args, flags)));
}

/** The flags of a table with some names, in the table's order. */
export function flagsNamed<T extends readonly FlagSpec[], N extends T[number]["name"]>(
  flags: T,
  names: readonly N[],
): Extract<T[number], { name: N }>[] {
  return flags.filter((flag) => (names as readonly string[]).includes(flag.name)) as Extract<T[number], { name: N }>[];
}

/** A flag under another program's prefix: `-timeout` becomes `-upstream-timeout`. */
export type PrefixedFlag<S extends FlagSpec, P extends string> = S extends FlagSpec
  ? Omit<S, "name"> & { readonly name: `${P}${S["name"]}` }
  : never;

/**
 * Another program's flags under a prefix, with their kinds, defaults and rules, so that a
 * program can take a whole policy's flags (./server -upstream takes the client's retry
 * flags as -upstream-…) from their one table instead of a copy. `describe` rewords each
 * description for its new place.
 */
export function prefixFlags<S extends FlagSpec, P extends string>(
  flags: readonly S[],
  prefix: P,
  describe: (description: string) => string,
): PrefixedFlag<S, P>[] {
  return flags.map(
    (flag) => ({ ...flag, name: `${prefix}${flag.name}`, description: describe(flag.description) }) as unknown as PrefixedFlag<S, P>,
  );
}

/** The values of prefixed flags under their own names, as the table they came from reads them. */
export function unprefixedValues<S extends FlagSpec>(
  flags: readonly S[],
  prefix: string,
  values: Readonly<Record<string, unknown>>,
): FlagValues<readonly S[]> {
  const own: Record<string, unknown> = {};
  for (const flag of flags) own[flag.name] = values[`${prefix}${flag.name}`];
  return own as FlagValues<readonly S[]>;
}

/** A message that names flags of `flags` (`-budget`) as the prefixed program knows them (`-upstream-budget`). */
export function withPrefixedNames(message: string, flags: readonly FlagSpec[], prefix: string): string {
  const names = flags.map((flag) => flag.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).sort((a, b) => b.length - a.length);
  return message.replace(new RegExp(`(^|[^\\w-])-(${names.join("|")})(?![\\w-])`, "g"), `$1-${prefix}$2`);
}

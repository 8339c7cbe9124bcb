import {
  ARTICLE_FACTOR,
  type BackoffPolicy,
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  POLICY_DEFAULTS,
  referencePolicy,
  tablePolicy,
} from "../backoff/index.ts";
import { FieldRangeError } from "../backoff/validate.ts";
import { DurationSyntaxError, formatDuration, parseDuration } from "../cli/duration.ts";
import type { FlagSpec, FlagValues } from "../cli/flags.ts";
import { refusalOf, UsageError } from "../cli/usage-error.ts";
import { findPreset, PRESET_NAMES, PRESETS, type PresetDefinition, type PresetName, presetStrategy, presetsHelp } from "./presets.ts";

/*
 * The one registry of retry strategies: their names and aliases, the flags that tune them
 * with each strategy's defaults, units and help, and how flags become a backoff policy.
 * The client, the simulator and the demo all read it.
 */

/** The flags that tune a strategy. Each strategy says which of them it reads. */
export type StrategyParameter = "simple-backoff-delay" | "min-delay" | "max-delay" | "backoff-factor" | "jitter" | "jitter-sd" | "table";

const DEFAULT_TABLE = POLICY_DEFAULTS.table.delaysMs.join(",");

export const STRATEGY_PARAMETER_FLAGS = [
  {
    name: "simple-backoff-delay",
    group: "strategy",
    kind: "duration",
    default: POLICY_DEFAULTS.constant.delayMs,
    minMs: 0,
    description: "delay between retries with the fixed strategy",
  },
  {
    name: "min-delay",
    group: "strategy",
    kind: "duration",
    default: undefined,
    minMs: 0,
    description: "first or base retry delay",
  },
  { name: "max-delay", group: "strategy", kind: "duration", default: undefined, minMs: 0, description: "cap on the retry delay" },
  {
    name: "backoff-factor",
    group: "strategy",
    kind: "number",
    default: undefined,
    min: 1,
    placeholder: "f",
    description: "growth per failure",
  },
  {
    name: "jitter",
    group: "strategy",
    kind: "number",
    default: undefined,
    min: 0,
    max: 1,
    placeholder: "fraction",
    description: "jitter as a fraction of the delay (exponential: standard deviation; grpc: ± spread)",
  },
  {
    name: "jitter-sd",
    group: "strategy",
    kind: "duration",
    default: undefined,
    minMs: 0,
    description: "exponential-backoff: standard deviation of its absolute normal jitter",
  },
  {
    name: "table",
    group: "strategy",
    kind: "string",
    default: DEFAULT_TABLE,
    placeholder: "list",
    description: "table strategy: comma-separated waits in ms or Go durations",
    check: (value) => tableProblem(value),
  },
] as const satisfies readonly FlagSpec[];

export type StrategyParameterValues = FlagValues<typeof STRATEGY_PARAMETER_FLAGS>;

export interface StrategyDefinition {
  /** The name `-strategy`, `-strategies` and every table use. */
  readonly name: string;
  /** Other names accepted for it. */
  readonly aliases: readonly string[];
  readonly summary: string;
  /** Where the formula comes from. */
  readonly source: string;
  /** The parameter flags it reads, with its own default for each, as help shows it. */
  readonly parameters: Readonly<Partial<Record<StrategyParameter, string>>>;
  /** The policy these flag values describe; RangeError on an impossible combination. */
  readonly build: (values: StrategyParameterValues) => BackoffPolicy;
}

const AWS_ARTICLE = 'Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog (2015)';
const ms = (value: number) => formatDuration(value);
const jitterDefaults = { "min-delay": ms(POLICY_DEFAULTS["full-jitter"].baseMs), "max-delay": ms(POLICY_DEFAULTS["full-jitter"].capMs) };

export const STRATEGIES = [
  {
    name: "fixed",
    aliases: ["constant"],
    summary: "retry after a fixed delay: the reference client's default",
    source: 'Andrey Smirnov, "Exponential Backoff or how not to crash a server" (github.com/smira/exponential-backoff)',
    parameters: { "simple-backoff-delay": ms(POLICY_DEFAULTS.constant.delayMs) },
    build: (values) => constantPolicy({ delayMs: values["simple-backoff-delay"] }),
  },
  {
    name: "exponential-backoff",
    aliases: ["reference"],
    summary: "the reference client's -exponential-backoff: factor times the previous wait, first retry after ~e x think time",
    source: "github.com/smira/exponential-backoff, client.go",
    parameters: {
      "min-delay": ms(POLICY_DEFAULTS.reference.minDelayMs),
      "max-delay": ms(POLICY_DEFAULTS.reference.maxDelayMs),
      "backoff-factor": String(ARTICLE_FACTOR),
      "jitter-sd": ms(POLICY_DEFAULTS.reference.jitterMs),
    },
    build: (values) =>
      referencePolicy({
        minDelayMs: values["min-delay"],
        maxDelayMs: values["max-delay"],
        factor: values["backoff-factor"],
        jitterMs: values["jitter-sd"],
      }),
  },
  {
    name: "exponential",
    aliases: [],
    summary: "the article's pseudo-code: min-delay x factor^n, capped, with proportional normal jitter",
    source: '"Exponential Backoff or how not to crash a server"',
    parameters: {
      "min-delay": ms(POLICY_DEFAULTS.exponential.minDelayMs),
      "max-delay": ms(POLICY_DEFAULTS.exponential.maxDelayMs),
      "backoff-factor": String(ARTICLE_FACTOR),
      jitter: String(POLICY_DEFAULTS.exponential.jitter),
    },
    build: (values) =>
      exponentialPolicy({
        minDelayMs: values["min-delay"],
        maxDelayMs: values["max-delay"],
        factor: values["backoff-factor"],
        jitter: values.jitter,
      }),
  },
  {
    name: "full-jitter",
    aliases: [],
    summary: "uniform(0, min(cap, base x 2^(n-1)))",
    source: AWS_ARTICLE,
    parameters: jitterDefaults,
    build: (values) => fullJitterPolicy({ baseMs: values["min-delay"], capMs: values["max-delay"] }),
  },
  {
    name: "equal-jitter",
    aliases: [],
    summary: "half of min(cap, base x 2^(n-1)), plus uniform up to the other half",
    source: AWS_ARTICLE,
    parameters: jitterDefaults,
    build: (values) => equalJitterPolicy({ baseMs: values["min-delay"], capMs: values["max-delay"] }),
  },
  {
    name: "decorrelated-jitter",
    aliases: [],
    summary: "min(cap, uniform(base, 3 x previous wait))",
    source: AWS_ARTICLE,
    parameters: jitterDefaults,
    build: (values) => decorrelatedJitterPolicy({ baseMs: values["min-delay"], capMs: values["max-delay"] }),
  },
  {
    name: "table",
    aliases: [],
    summary: "a table of waits by attempt, saturating at its last entry, jittered to [m/2, 1.5m)",
    source: 'Peter Bourgon, "Simple backoff", Gopher Academy Blog (2014)',
    parameters: { table: DEFAULT_TABLE },
    build: (values) => tablePolicy({ delaysMs: parseTable(values.table) }),
  },
  {
    name: "google",
    aliases: [],
    summary: "2^(n-1) s plus up to 1000 ms, giving up after 5 retries",
    source: 'Google Cloud, "Exponential backoff"',
    parameters: {},
    build: () => googlePolicy(),
  },
  {
    name: "grpc",
    aliases: [],
    summary: "gRPC connection backoff: min(initial x multiplier^(n-1), max), ± jitter",
    source: "gRPC, doc/connection-backoff.md",
    parameters: {
      "min-delay": ms(POLICY_DEFAULTS.grpc.initialMs),
      "max-delay": ms(POLICY_DEFAULTS.grpc.maxMs),
      "backoff-factor": String(POLICY_DEFAULTS.grpc.multiplier),
      jitter: String(POLICY_DEFAULTS.grpc.jitter),
    },
    build: (values) =>
      grpcPolicy({
        initialMs: values["min-delay"],
        maxMs: values["max-delay"],
        multiplier: values["backoff-factor"],
        jitter: values.jitter,
      }),
  },
] as const satisfies readonly StrategyDefinition[];

export type StrategyName = (typeof STRATEGIES)[number]["name"];

export const STRATEGY_NAMES: readonly StrategyName[] = STRATEGIES.map((strategy) => strategy.name);

/** Every name the command line accepts: names and aliases. */
export const STRATEGY_CHOICES: readonly string[] = STRATEGIES.flatMap((strategy) => [strategy.name, ...strategy.aliases]);

/** The strategy a name or alias stands for, or undefined. */
export function findStrategy(name: string): StrategyDefinition | undefined {
  return STRATEGIES.find((strategy) => strategy.name === name || (strategy.aliases as readonly string[]).includes(name));
}

/** What a -strategies list may name: a strategy, or a preset of flags (presets.ts). */
export type RunName = StrategyName | PresetName;

/** Every name a -strategies list takes, and its two words for groups. */
export const RUN_CHOICES_HELP = `${STRATEGY_NAMES.join(", ")}; presets ${PRESET_NAMES.join(", ")}; 'all' for every strategy, 'presets' for every preset`;

/**
 * Parses `fixed,exponential-backoff,aws-standard` into canonical names: strategies (or
 * their aliases) and presets; `all` stands for every strategy and `presets` for every
 * preset. Throws naming an unknown one.
 */
export function parseStrategyList(text: string): RunName[] {
  return text.split(",").flatMap((part): RunName[] => {
    const name = part.trim();
    if (name === "all") return [...STRATEGY_NAMES];
    if (name === "presets") return [...PRESET_NAMES];
    const preset = findPreset(name);
    if (preset !== undefined) return [preset.name as PresetName];
    const found = findStrategy(name);
    if (found === undefined) throw new UsageError(`unknown strategy "${name}"; one of ${RUN_CHOICES_HELP}`);
    return [found.name as StrategyName];
  });
}

/** The preset a run name stands for, if it is one. */
export function presetOf(name: RunName): PresetDefinition | undefined {
  return findPreset(name);
}

/** The backoff strategy a run uses: itself, or its preset's. */
export function strategyOfRun(name: RunName): StrategyName {
  const preset = findPreset(name);
  return (preset === undefined ? name : findStrategy(presetStrategy(preset))!.name) as StrategyName;
}

/** For a flag table's `check`: what is wrong with a strategy list, or undefined. */
export function strategyListProblem(text: string): string | undefined {
  return refusalOf(() => parseStrategyList(text), UsageError);
}

/**
 * The policy for a strategy and its parameter flags. A parameter flag given for a strategy
 * that does not read it is a usage error, so that no flag is silently ignored.
 */
export function buildStrategyPolicy(name: StrategyName, values: StrategyParameterValues): BackoffPolicy {
  const strategy = findStrategy(name)!;
  for (const flag of STRATEGY_PARAMETER_FLAGS) {
    if (flag.default !== undefined || values[flag.name] === undefined || flag.name in strategy.parameters) continue;
    const takes = Object.keys(strategy.parameters).map((parameter) => `-${parameter}`);
    throw new UsageError(
      `-${flag.name} does not apply to -strategy ${name}` +
        (takes.length > 0 ? ` (it takes ${takes.join(", ")})` : " (it has no parameters)"),
    );
  }
  try {
    return strategy.build(values);
  } catch (error) {
    if (error instanceof FieldRangeError) throw new UsageError(`invalid settings for -strategy ${name}: ${error.describe(flagOfField)}`);
    if (error instanceof RangeError) throw new UsageError(`invalid settings for -strategy ${name}: ${error.message}`);
    throw error;
  }
}

/** The parameter flags with those that a strategy does not read set back to their defaults. */
export function onlyParametersOf(name: StrategyName, values: StrategyParameterValues): StrategyParameterValues {
  const strategy = findStrategy(name)!;
  const kept = { ...values } as Record<string, unknown>;
  for (const flag of STRATEGY_PARAMETER_FLAGS) if (!(flag.name in strategy.parameters)) kept[flag.name] = flag.default;
  return kept as StrategyParameterValues;
}

/** The flag behind each field of a backoff policy, for messages about them. */
const FLAG_OF_POLICY_FIELD: Readonly<Record<string, string>> = {
  delayMs: "-simple-backoff-delay",
  minDelayMs: "-min-delay",
  baseMs: "-min-delay",
  initialMs: "-min-delay",
  maxDelayMs: "-max-delay",
  capMs: "-max-delay",
  maxMs: "-max-delay",
  factor: "-backoff-factor",
  multiplier: "-backoff-factor",
  jitter: "-jitter",
  jitterMs: "-jitter-sd",
  delaysMs: "-table",
};

/** A policy field in the words of the command line: `minDelayMs` is "-min-delay (ms)". */
function flagOfField(field: string): string {
  const flag = FLAG_OF_POLICY_FIELD[field];
  if (flag === undefined) return field;
  return field.endsWith("Ms") ? `${flag} (ms)` : flag;
}

/** Help text listing every strategy, its source and its parameters' defaults. */
export function strategiesHelp(): string {
  return STRATEGIES.map((strategy) => {
    const aliases = strategy.aliases.length > 0 ? ` (also ${strategy.aliases.join(", ")})` : "";
    const parameters = Object.entries(strategy.parameters)
      .map(([flag, value]) => `-${flag} ${value}`)
      .join(", ");
    return `  ${strategy.name}${aliases}: ${strategy.summary}${parameters === "" ? "" : `; ${parameters}`}\n      source: ${strategy.source}\n`;
  }).join("");
}

/** The presets that -strategies takes in the demo and the simulator, and their help. */
export { PRESETS, presetsHelp };

function parseTable(text: string): number[] {
  return text.split(",").map((item) => {
    const trimmed = item.trim();
    return /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : parseDuration(trimmed);
  });
}

function tableProblem(text: string): string | undefined {
  try {
    const table = parseTable(text);
    return table.length === 0 ? "must list at least one wait" : undefined;
  } catch (error) {
    if (!(error instanceof DurationSyntaxError)) throw error;
    return "must be comma-separated waits in ms (e.g. 0,10,100) or Go durations (e.g. 0,10ms,1s)";
  }
}

import { type Document, isAlias, isMap, isScalar, isSeq, type Pair, parseAllDocuments, type YAMLMap } from "yaml";
import { formatDuration, parseDuration } from "../../cli/duration.ts";
import { type FlagSettings, simDefaults, simValuesFor } from "../../recommend/settings.ts";
import { findStrategy } from "../../strategies/registry.ts";
import {
  CHECK_FLAGS,
  type ConfigFormat,
  ConfigFileError,
  type ConfigReading,
  type FieldReading,
  type PolicyReading,
  type UnmodeledField,
  type Written,
} from "../format.ts";
import { sameMeaning } from "./aws.ts";

/*
 * resilience4j's Spring Boot configuration (application.yml): each retry instance under
 * resilience4j.retry.instances is a policy, with the circuit breaker instance of the same name
 * when there is one. Instances inherit from resilience4j.retry.configs (their baseConfig, else
 * configs.default) as resilience4j's CommonRetryConfigurationProperties does. Spring's relaxed
 * binding is honoured: maxAttempts, max-attempts and max_attempts are one property, and a key may
 * hold several levels (resilience4j.retry: ...).
 */

const RETRY_DOCS = 'Resilience4j documentation, "Retry", https://resilience4j.readme.io/docs/retry';
const BREAKER_DOCS = 'Resilience4j documentation, "CircuitBreaker", https://resilience4j.readme.io/docs/circuitbreaker';
const SPRING_DOCS = 'Resilience4j documentation, "Getting Started: Spring Boot 3", https://resilience4j.readme.io/docs/getting-started-3';
const SOURCE = "https://github.com/resilience4j/resilience4j/blob/master";
const INTERVAL_SOURCE = `resilience4j IntervalFunction (DEFAULT_MULTIPLIER 1.5, DEFAULT_RANDOMIZATION_FACTOR 0.5), ${SOURCE}/resilience4j-core/src/main/java/io/github/resilience4j/core/IntervalFunction.java`;
const PROPERTIES_SOURCE = `resilience4j CommonRetryConfigurationProperties, ${SOURCE}/resilience4j-framework-common/src/main/java/io/github/resilience4j/common/retry/configuration/CommonRetryConfigurationProperties.java`;
const SPRING_DURATIONS =
  'Spring Boot Reference, "Externalized Configuration: Converting Durations", https://docs.spring.io/spring-boot/reference/features/external-config.html';

/** resilience4j's defaults: RetryConfig (3 attempts, 500 ms), IntervalFunction, CircuitBreakerConfig. */
const DEFAULTS = {
  maxAttempts: 3,
  waitMs: 500,
  multiplier: 1.5,
  factor: 0.5,
  windowType: "COUNT_BASED",
  windowSize: 100,
  minimumCalls: 100,
  failureRate: 50,
  openMs: 60_000,
} as const;

/** Our waits need a ceiling; where resilience4j has none, an hour stands for none. */
const UNCAPPED_MS = 3_600_000;

// ---------------------------------------------------------------------------------------------
// Spring durations: "500ms", "10s", a bare number of milliseconds, or ISO-8601 ("PT0.5S")

const SIMPLE_DURATION = /^([+-]?\d+)([a-zA-Z]{0,2})$/;
const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO_DURATION = /^[+-]?P(?:([+-]?\d+)D)?(?:T(?:([+-]?\d+)H)?(?:([+-]?\d+)M)?(?:([+-]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i;

/** Milliseconds, or undefined when Spring Boot would not read the text as a duration. */
export function springDurationMs(text: string): number | undefined {
  const simple = SIMPLE_DURATION.exec(text);
  if (simple !== null) {
    const unit = UNIT_MS[(simple[2] || "ms").toLowerCase()];
    return unit === undefined ? undefined : Number(simple[1]) * unit;
  }
  const iso = ISO_DURATION.exec(text);
  if (iso === null || iso.slice(1).every((part) => part === undefined) || /T$/i.test(text)) return undefined;
  const [days, hours, minutes, seconds, fraction] = iso.slice(1).map((part) => part ?? "0") as [string, string, string, string, string];
  // As java.time.Duration.parse: the fraction takes the sign of its seconds, and a leading sign negates the whole.
  const secondsMs = (Math.abs(Number(seconds)) + Number(`0.${fraction}`)) * 1000 * (seconds.startsWith("-") ? -1 : 1);
  const total = Number(days) * UNIT_MS.d! + Number(hours) * UNIT_MS.h! + Number(minutes) * UNIT_MS.m! + secondsMs;
  return text.startsWith("-") ? -total : total;
}

/** A duration as Spring Boot reads it, in the style of the value it replaces (ISO, bare milliseconds or a unit). */
function springDurationText(ms: number, like: string | undefined): string {
  if (like !== undefined && /^[+-]?P/i.test(like)) return `PT${ms / 1000}S`;
  if (!Number.isInteger(ms)) return `PT${ms / 1000}S`;
  if (like !== undefined && /^\d+$/.test(like)) return String(ms);
  return ms % 1000 === 0 && ms > 0 ? `${ms / 1000}s` : `${ms}ms`;
}

// ---------------------------------------------------------------------------------------------
// The YAML, as Spring binds it

/** Spring's relaxed binding: maxAttempts, max-attempts and max_attempts are one name. */
const relaxed = (key: string) => key.replace(/[-_]/g, "").toLowerCase();

interface Prop {
  readonly pair: Pair;
  readonly path: string;
  /** The value as written (a list or map as JSON). */
  readonly text: string;
}

/** A map of settings (an instance or a shared config), its properties by relaxed name. */
interface Section {
  readonly name: string;
  readonly path: string;
  readonly map: YAMLMap;
  readonly props: ReadonlyMap<string, Prop>;
}

const keyText = (pair: Pair) => String(isScalar(pair.key) ? pair.key.value : pair.key);

function valueText(node: unknown): string {
  if (isScalar(node)) return String(node.value);
  if (isMap(node) || isSeq(node)) return JSON.stringify(node.toJSON());
  return String(node);
}

/** The node at `segments` below `node`, a key standing for one or more dotted segments. */
function lookup(node: unknown, segments: readonly string[], path: string): { node: unknown; path: string } | undefined {
  if (segments.length === 0) return { node, path };
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    const key = keyText(pair);
    const parts = key.split(".");
    if (parts.length > segments.length || !parts.every((part, index) => relaxed(part) === relaxed(segments[index]!))) continue;
    const found = lookup(pair.value, segments.slice(parts.length), path === "" ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

function sectionOf(name: string, node: unknown, path: string): Section {
  // An alias shares another section's map: check would change both when it writes one, so it asks for resilience4j's own sharing.
  if (isAlias(node)) {
    throw new ConfigFileError(
      `${path}: the YAML alias *${node.source} is not read; say what "${name}" shares with baseConfig, as resilience4j does`,
    );
  }
  if (!isMap(node)) throw new ConfigFileError(`${path}: is not a map of settings, the properties of "${name}" as key: value`);
  const props = new Map<string, Prop>();
  for (const pair of node.items) {
    const key = keyText(pair);
    // SnakeYAML (Spring Boot's) merges `<<: *anchor`; read as a key, it would be graded on the defaults, and a write
    // into the anchored section would change every section that merges it.
    if (key === "<<") {
      throw new ConfigFileError(
        `${path}.<<: a YAML merge key is not read; say what "${name}" shares with baseConfig, as resilience4j does`,
      );
    }
    props.set(relaxed(key), { pair, path: `${path}.${key}`, text: valueText(pair.value) });
  }
  return { name, path, map: node, props };
}

/** Whether `parts` are the first of `segments`, in relaxed spelling. */
const matches = (parts: readonly string[], segments: readonly string[]) =>
  parts.length <= segments.length && parts.every((part, index) => relaxed(part) === relaxed(segments[index]!));

/**
 * The named maps below `segments` (instances, configs), by name as written: entries of the map there, or keys that run
 * on into the name (`resilience4j.retry.instances.backendA:`).
 */
function sectionsAt(node: unknown, segments: readonly string[], path = "", sections = new Map<string, Section>()): Map<string, Section> {
  if (node === null || node === undefined) return sections;
  if (!isMap(node)) throw new ConfigFileError(`${path}: is not allowed, a map of settings is`);
  for (const pair of node.items) {
    const key = keyText(pair);
    const parts = key.split(".");
    const at = path === "" ? key : `${path}.${key}`;
    if (parts.length === segments.length + 1 && matches(parts.slice(0, -1), segments))
      sections.set(parts.at(-1)!, sectionOf(parts.at(-1)!, pair.value, at));
    else if (matches(parts, segments)) sectionsAt(pair.value, segments.slice(parts.length), at, sections);
  }
  return sections;
}

// ---------------------------------------------------------------------------------------------
// Typed property values

/** A property's value and where it comes from: a field of the file, or a default. */
interface Value<T> {
  readonly value: T;
  readonly field: string;
  /** As written, or `default (…)`. */
  readonly text: string;
  readonly prop?: Prop;
}

type Parse<T> = (prop: Prop) => T;

const wrong = (prop: Prop, allowed: string) => new ConfigFileError(`${prop.path}: "${prop.text}" is not allowed, ${allowed}`);

const wholeNumber =
  (min: number): Parse<number> =>
  (prop) => {
    if (!/^[+-]?\d+$/.test(prop.text) || Number(prop.text) < min) throw wrong(prop, `a whole number of ${min} or more is`);
    return Number(prop.text);
  };

const numberIn =
  (allowed: string, inRange: (value: number) => boolean): Parse<number> =>
  (prop) => {
    const value = Number(prop.text);
    if (prop.text.trim() === "" || !Number.isFinite(value) || !inRange(value)) throw wrong(prop, allowed);
    return value;
  };

const bool: Parse<boolean> = (prop) => {
  const text = prop.text.toLowerCase();
  if (text !== "true" && text !== "false") throw wrong(prop, "true or false is");
  return text === "true";
};

const duration: Parse<number> = (prop) => {
  const ms = springDurationMs(prop.text);
  if (ms === undefined) throw wrong(prop, "a duration is (500ms, 10s, PT0.5S, or a whole number of milliseconds)");
  if (ms < 0) throw wrong(prop, "a duration of 0 or more is");
  return ms;
};

const windowType: Parse<"COUNT_BASED" | "TIME_BASED"> = (prop) => {
  const type = relaxed(prop.text);
  if (type !== "countbased" && type !== "timebased") throw wrong(prop, "COUNT_BASED or TIME_BASED is");
  return type === "countbased" ? "COUNT_BASED" : "TIME_BASED";
};

function get<T>(section: Section | undefined, name: string, parse: Parse<T>): Value<T> | undefined {
  const prop = section?.props.get(relaxed(name));
  if (prop === undefined) return undefined;
  return { value: parse(prop), field: prop.path, text: prop.text, prop };
}

function byDefault<T>(section: Section, name: string, value: T, shown = String(value)): Value<T> {
  return { value, field: `${section.path}.${name}`, text: `default (${shown})` };
}

/** The shared config a section inherits: its baseConfig (which must exist), else configs.default for any other name. */
function baseOf(section: Section | undefined, name: string, configs: ReadonlyMap<string, Section>): Section | undefined {
  const base = section?.props.get("baseconfig");
  if (base !== undefined) {
    const found = configs.get(base.text);
    if (found === undefined) throw new ConfigFileError(`${base.path}: "${base.text}" is not allowed, the name of an entry of configs is`);
    return found;
  }
  return name === "default" ? undefined : configs.get("default");
}

// ---------------------------------------------------------------------------------------------
// Retry: the wait between attempts, as CommonRetryConfigurationProperties builds it

type IntervalKind = "constant" | "randomized" | "exponential" | "exponential-randomized";

interface Interval {
  readonly interval: IntervalKind;
  readonly wait: Value<number>;
  readonly exponential: Value<boolean>;
  readonly randomized: Value<boolean>;
  readonly multiplier?: Value<number> | undefined;
  readonly factor?: Value<number> | undefined;
  /** The ceiling, when resilience4j applies one. */
  readonly max?: Value<number> | undefined;
  /** Fields present that resilience4j ignores in this combination. */
  readonly ignored: readonly UnmodeledField[];
}

interface RetryResolved {
  readonly section: Section;
  /** The section and the configs it inherits from, nearest first. */
  readonly chain: readonly Section[];
  /** Fields present that resilience4j ignores where they are. */
  readonly ignored: readonly UnmodeledField[];
  readonly attempts: Value<number>;
  readonly interval: Interval;
}

const RETRY_PARSERS = {
  maxAttempts: wholeNumber(1),
  waitDuration: duration,
  enableExponentialBackoff: bool,
  enableRandomizedWait: bool,
  exponentialBackoffMultiplier: numberIn("a multiplier above 0 is", (value) => value > 0),
  exponentialMaxWaitDuration: duration,
  randomizedWaitFactor: numberIn("a factor from 0 up to (not including) 1 is", (value) => value >= 0 && value < 1),
} as const;

type RetryProperty = keyof typeof RETRY_PARSERS;

const retryGet = <K extends RetryProperty>(section: Section | undefined, name: K) =>
  get(section, name, RETRY_PARSERS[name] as Parse<ReturnType<(typeof RETRY_PARSERS)[K]>>);

const ignoredField = (value: Value<unknown> | undefined, why: string): UnmodeledField[] =>
  value?.prop === undefined ? [] : [{ field: value.field, value: value.text, why: `ignored by resilience4j here: ${why}` }];

/** The multiplier, factor and ceiling that apply, as CommonRetryConfigurationProperties.configureRetryIntervalFunction picks them. */
function growthOf(section: Section, interval: IntervalKind, merged: <K extends RetryProperty>(name: K) => Value<number> | undefined) {
  const given = { multiplier: merged("exponentialBackoffMultiplier"), max: merged("exponentialMaxWaitDuration") };
  const factor = retryGet(section, "randomizedWaitFactor");
  const defaultMultiplier = byDefault(section, "exponentialBackoffMultiplier", DEFAULTS.multiplier);
  const defaultFactor = byDefault(section, "randomizedWaitFactor", DEFAULTS.factor);
  const noExponential = "enableExponentialBackoff is not true";
  switch (interval) {
    case "constant":
    case "randomized": {
      const ignored = [...ignoredField(given.multiplier, noExponential), ...ignoredField(given.max, noExponential)];
      if (interval === "constant") ignored.push(...ignoredField(factor, "enableRandomizedWait is not true"));
      return { factor: interval === "randomized" ? (factor ?? defaultFactor) : undefined, ignored };
    }
    case "exponential": {
      const ignored = [...ignoredField(factor, "enableRandomizedWait is not true")];
      if (given.multiplier === undefined) ignored.push(...ignoredField(given.max, "a ceiling needs exponentialBackoffMultiplier too"));
      return { multiplier: given.multiplier ?? defaultMultiplier, max: given.multiplier && given.max, ignored };
    }
    case "exponential-randomized": {
      // Without a multiplier resilience4j takes both defaults; without a factor, the default one; and a ceiling only with all three.
      const ignored = given.multiplier === undefined ? ignoredField(factor, "it needs exponentialBackoffMultiplier too") : [];
      const complete = given.multiplier !== undefined && factor !== undefined;
      if (!complete) ignored.push(...ignoredField(given.max, "a ceiling needs exponentialBackoffMultiplier and randomizedWaitFactor too"));
      return {
        multiplier: given.multiplier ?? defaultMultiplier,
        factor: given.multiplier !== undefined ? (factor ?? defaultFactor) : defaultFactor,
        max: complete ? given.max : undefined,
        ignored,
      };
    }
  }
}

/** The wait of a section with its own waitDuration; the switches, multiplier and ceiling may come from its base. */
function intervalOf(section: Section, wait: Value<number>, base: Section | undefined): Interval {
  const merged = <K extends RetryProperty>(name: K) => retryGet(section, name) ?? retryGet(base, name);
  const exponential = merged("enableExponentialBackoff") ?? byDefault(section, "enableExponentialBackoff", false);
  const randomized = merged("enableRandomizedWait") ?? byDefault(section, "enableRandomizedWait", false);
  const interval: IntervalKind = exponential.value
    ? randomized.value
      ? "exponential-randomized"
      : "exponential"
    : randomized.value
      ? "randomized"
      : "constant";
  const growth = growthOf(section, interval, merged as <K extends RetryProperty>(name: K) => Value<number> | undefined);
  // resilience4j merges an instance's switches, multiplier and ceiling from its base, never its randomizedWaitFactor.
  const baseFactor = retryGet(base, "randomizedWaitFactor");
  const notInherited =
    interval.endsWith("randomized") && retryGet(section, "randomizedWaitFactor") === undefined
      ? ignoredField(baseFactor, `not inherited by ${section.path}, which sets its own waitDuration (0.5 applies)`)
      : [];
  return { interval, wait, exponential, randomized, ...growth, ignored: [...growth.ignored, ...notInherited] };
}

function defaultInterval(section: Section): Interval {
  return {
    interval: "constant",
    wait: byDefault(section, "waitDuration", DEFAULTS.waitMs, "500ms"),
    exponential: byDefault(section, "enableExponentialBackoff", false),
    randomized: byDefault(section, "enableRandomizedWait", false),
    ignored: [],
  };
}

function resolveRetry(section: Section, configs: ReadonlyMap<string, Section>, depth = 0): RetryResolved {
  if (depth > configs.size) throw new ConfigFileError(`${section.path}.baseConfig: is not allowed, a chain of configs without a loop is`);
  const base = baseOf(section, section.name, configs);
  const inherited = base === undefined ? undefined : resolveRetry(base, configs, depth + 1);
  const attempts = retryGet(section, "maxAttempts") ?? inherited?.attempts ?? byDefault(section, "maxAttempts", DEFAULTS.maxAttempts);
  const wait = retryGet(section, "waitDuration");
  // Spring binds (and so checks) every property, used or not.
  const own = INTERVAL_PROPERTIES.map((name) => retryGet(section, name));
  const interval = wait !== undefined ? intervalOf(section, wait, base) : (inherited?.interval ?? defaultInterval(section));
  // Without its own waitDuration a section keeps its base's wait whole: its own switches, multiplier, ceiling and factor do nothing.
  const unused =
    wait !== undefined ? [] : own.flatMap((value) => ignoredField(value, "without its own waitDuration, the wait is its base's"));
  const ignored = [...(wait !== undefined || inherited === undefined ? interval.ignored : inherited.ignored), ...unused];
  return { section, chain: [section, ...(inherited?.chain ?? [])], attempts, interval, ignored };
}

const INTERVAL_PROPERTIES = [
  "enableExponentialBackoff",
  "enableRandomizedWait",
  "exponentialBackoffMultiplier",
  "exponentialMaxWaitDuration",
  "randomizedWaitFactor",
] as const;

// ---------------------------------------------------------------------------------------------
// Retry: as our flags (gRPC's backoff, min(wait x multiplier^(n-1), max) x (1 ± factor), says all four kinds)

const ms = (value: number) => formatDuration(value);

const field = (value: Value<unknown>, settings: FlagSettings, source: string, approximation?: string): FieldReading => ({
  field: value.field,
  value: value.text,
  settings,
  source,
  ...(approximation === undefined ? {} : { approximation }),
});

const TRUNCATION =
  "resilience4j computes each wait from the last, truncated to whole milliseconds ((long) (last x multiplier)): its waits run below ours by less than n ms at retry n";
const UNIFORM_PLUS_ONE = "resilience4j draws uniformly from [w(1-f), w(1+f) + 1 ms), ours from [w(1-f), w(1+f)]: 1 ms apart";
const CAP_AFTER_RANDOM =
  "resilience4j caps the randomized wait, min(max, w x m^(n-1) x (1 ± f)); ours randomizes the capped one: once the ceiling binds, its waits are at most max, ours spread ± f around max";

function ceilingField(interval: Interval, attempts: number): FieldReading {
  if (interval.max !== undefined)
    return field(
      interval.max,
      { "max-delay": ms(interval.max.value) },
      `${RETRY_DOCS}; ${PROPERTIES_SOURCE}`,
      interval.interval === "exponential-randomized" ? CAP_AFTER_RANDOM : undefined,
    );
  const multiplier = interval.multiplier!.value;
  const bindsFrom = multiplier <= 1 ? Infinity : Math.ceil(Math.log(UNCAPPED_MS / interval.wait.value) / Math.log(multiplier)) + 1;
  const binds = bindsFrom <= attempts - 1 ? `, which binds from retry ${bindsFrom} on` : ", which no retry reaches";
  const none = { ...interval.wait, field: interval.wait.field.replace(/[^.]+$/, "exponentialMaxWaitDuration"), text: "default (none)" };
  return field(
    none,
    { "max-delay": ms(UNCAPPED_MS) },
    PROPERTIES_SOURCE,
    `resilience4j has no ceiling here; ${ms(UNCAPPED_MS)} stands for none${binds}`,
  );
}

function waitField(interval: Interval, growing: boolean): FieldReading {
  const source = `${RETRY_DOCS}; ${SPRING_DURATIONS}`;
  const wait = ms(interval.wait.value);
  if (!growing) return field(interval.wait, { "min-delay": wait, "max-delay": wait }, source);
  // A ceiling below the first wait holds every wait to it, from the first.
  const max = interval.max?.value;
  if (max === undefined || max >= interval.wait.value) return field(interval.wait, { "min-delay": wait }, source);
  return field(interval.wait, { "min-delay": ms(max) }, source, `the ceiling ${ms(max)} is below it, so every wait is the ceiling`);
}

function multiplierField(multiplier: Value<number>): FieldReading {
  if (multiplier.value >= 1) return field(multiplier, { "backoff-factor": String(multiplier.value) }, INTERVAL_SOURCE, TRUNCATION);
  return field(
    multiplier,
    { "backoff-factor": "1" },
    INTERVAL_SOURCE,
    "resilience4j's waits shrink by this factor each retry; ours stay at the first wait",
  );
}

function retryFields(resolved: RetryResolved): FieldReading[] {
  const { interval, attempts } = resolved;
  const growing = interval.interval.startsWith("exponential");
  const fields = [
    field(
      interval.exponential,
      growing ? { strategy: "grpc" } : { strategy: "grpc", "backoff-factor": "1" },
      `${RETRY_DOCS}; ${PROPERTIES_SOURCE}`,
    ),
    field(interval.randomized, interval.factor === undefined ? { jitter: "0" } : {}, `${RETRY_DOCS}; ${PROPERTIES_SOURCE}`),
    waitField(interval, growing),
  ];
  if (interval.multiplier !== undefined) fields.push(multiplierField(interval.multiplier));
  if (growing) fields.push(ceilingField(interval, attempts.value));
  if (interval.factor !== undefined)
    fields.push(field(interval.factor, { jitter: String(interval.factor.value) }, INTERVAL_SOURCE, UNIFORM_PLUS_ONE));
  fields.push(field(attempts, { "max-attempts": String(attempts.value) }, RETRY_DOCS));
  return fields;
}

/** Retry properties we know and do not model, and why. */
const RETRY_UNMODELED: Readonly<Record<string, string>> = {
  retryexceptions: "which exceptions are retried: every failure in the simulation is a retryable one",
  ignoreexceptions: "which exceptions are not retried: every failure in the simulation is a retryable one",
  retryexceptionpredicate: "which exceptions are retried: every failure in the simulation is a retryable one",
  resultpredicate: "which results are retried: the simulation retries failures only",
  intervalbifunction: "a wait function in code replaces the waits read here; the simulation keeps the waits read here",
  consumeresultbeforeretryattempt: "a hook run before a retry: it changes no call",
  eventconsumerbuffersize: "the buffer of events kept for monitoring: it changes no call",
  failaftermaxattempts: "what the caller is given after the last attempt: it changes no call",
};

const RETRY_MODELED = new Set([...Object.keys(RETRY_PARSERS).map(relaxed), "baseconfig"]);

function unknownProps(
  section: Section,
  modeled: ReadonlySet<string>,
  known: Readonly<Record<string, string>>,
  what: string,
): UnmodeledField[] {
  return [...section.props.entries()]
    .filter(([name]) => !modeled.has(name))
    .map(([name, prop]) => ({
      field: prop.path,
      value: prop.text,
      why: known[name] ?? `not modelled; if it is no property of resilience4j's ${what}, Spring Boot ignores it`,
    }));
}

// ---------------------------------------------------------------------------------------------
// The circuit breaker of the same name, as our sampling or consecutive breaker

interface BreakerResolved {
  readonly section: Section;
  /** The config it inherits from (its baseConfig, else configs.default), whose properties it does not set itself. */
  readonly base: Section | undefined;
  readonly type: Value<"COUNT_BASED" | "TIME_BASED">;
  readonly size: Value<number>;
  readonly minimumCalls: Value<number>;
  readonly failureRate: Value<number>;
  readonly open: Value<number>;
}

const BREAKER_PARSERS = {
  slidingWindowType: windowType,
  slidingWindowSize: wholeNumber(1),
  minimumNumberOfCalls: wholeNumber(1),
  failureRateThreshold: numberIn("a percentage above 0 and at most 100 is", (value) => value > 0 && value <= 100),
  waitDurationInOpenState: duration,
} as const;

function resolveBreaker(section: Section, configs: ReadonlyMap<string, Section>): BreakerResolved {
  const base = baseOf(section, section.name, configs);
  const value = <K extends keyof typeof BREAKER_PARSERS, T>(name: K, fallback: T, shown?: string): Value<T> => {
    const parse = BREAKER_PARSERS[name] as unknown as Parse<T>;
    return get(section, name, parse) ?? get(base, name, parse) ?? byDefault(section, name, fallback, shown);
  };
  return {
    section,
    base,
    type: value("slidingWindowType", DEFAULTS.windowType as "COUNT_BASED" | "TIME_BASED"),
    size: value("slidingWindowSize", DEFAULTS.windowSize as number),
    minimumCalls: value("minimumNumberOfCalls", DEFAULTS.minimumCalls as number),
    failureRate: value("failureRateThreshold", DEFAULTS.failureRate as number),
    open: value("waitDurationInOpenState", DEFAULTS.openMs as number, "60s"),
  };
}

/** A count-based window that opens at 100 % failures is a run of failures in a row. */
const isConsecutive = (breaker: BreakerResolved) => breaker.type.value === "COUNT_BASED" && breaker.failureRate.value === 100;

/** resilience4j's CircuitBreakerMetrics lowers the minimum to the window's size when the window counts calls. */
const effectiveMinimum = (breaker: BreakerResolved) =>
  breaker.type.value === "COUNT_BASED" ? Math.min(breaker.minimumCalls.value, breaker.size.value) : breaker.minimumCalls.value;

const HALF_OPEN =
  "half-open, resilience4j lets permittedNumberOfCallsInHalfOpenState calls through (10 by default) and closes when their failure " +
  "rate is under the threshold; ours lets one probe through and closes when it succeeds";

function breakerFields(breaker: BreakerResolved): FieldReading[] {
  const open = field(breaker.open, { "breaker-break": ms(breaker.open.value) }, BREAKER_DOCS);
  if (isConsecutive(breaker)) {
    const minimum = effectiveMinimum(breaker);
    return [
      field(breaker.type, { breaker: "consecutive" }, BREAKER_DOCS, HALF_OPEN),
      field(breaker.size, { "breaker-failures": String(breaker.size.value) }, BREAKER_DOCS),
      field(
        breaker.minimumCalls,
        {},
        BREAKER_DOCS,
        minimum < breaker.size.value
          ? `until the window fills, ${minimum} failures in a row open it; ours waits for ${breaker.size.value}`
          : undefined,
      ),
      field(breaker.failureRate, {}, BREAKER_DOCS),
      open,
    ];
  }
  const counted = breaker.type.value === "COUNT_BASED";
  return [
    field(breaker.type, { breaker: "sampling" }, BREAKER_DOCS, HALF_OPEN),
    field(
      breaker.size,
      { "breaker-window": ms(breaker.size.value * 1000) },
      BREAKER_DOCS,
      counted
        ? `COUNT_BASED counts the last ${breaker.size.value} calls however old; ours counts the calls of a time window, ${breaker.size.value} s here, which holds as many at one call a second per breaker`
        : `resilience4j sums ${breaker.size.value} one-second buckets; ours sums 10 buckets over the window`,
    ),
    field(breaker.minimumCalls, { "breaker-min-throughput": String(effectiveMinimum(breaker)) }, BREAKER_DOCS),
    field(breaker.failureRate, { "breaker-ratio": String(breaker.failureRate.value / 100) }, BREAKER_DOCS),
    open,
  ];
}

const BREAKER_UNMODELED: Readonly<Record<string, string>> = {
  permittednumberofcallsinhalfopenstate: HALF_OPEN,
  slowcallratethreshold: "slow calls do not open our breaker; only failures (timeouts among them) do",
  slowcalldurationthreshold: "slow calls do not open our breaker; only failures (timeouts among them) do",
  automatictransitionfromopentohalfopenenabled:
    "ours turns half-open at the first call after the break, as resilience4j does without it; with it, a timer does it at the break's end",
  maxwaitdurationinhalfopenstate: "ours stays half-open until its probe's outcome",
  recordexceptions: "which exceptions count as failures: every failure in the simulation counts",
  ignoreexceptions: "which exceptions are ignored: no failure in the simulation is",
  recordfailurepredicate: "which exceptions count as failures: every failure in the simulation counts",
  ignoreexceptionpredicate: "which exceptions are ignored: no failure in the simulation is",
  recordresultpredicate: "which results count as failures: the simulation counts failures only",
  enableexponentialbackoff: "a break that grows each time it opens: ours breaks for waitDurationInOpenState every time",
  enablerandomizedwait: "a randomized break: ours breaks for waitDurationInOpenState every time",
  eventconsumerbuffersize: "the buffer of events kept for monitoring: it changes no call",
  registerhealthindicator: "a health indicator for monitoring: it changes no call",
  allowhealthindicatortofail: "a health indicator for monitoring: it changes no call",
  writablestacktraceenabled: "stack traces of refused calls: it changes no call",
};

const BREAKER_MODELED = new Set([...Object.keys(BREAKER_PARSERS).map(relaxed), "baseconfig"]);

/** The breaker's properties we do not model: its own, and those of its base config that it does not set itself. */
function breakerUnmodeled(breaker: BreakerResolved): UnmodeledField[] {
  const own = unknownProps(breaker.section, BREAKER_MODELED, BREAKER_UNMODELED, "circuit breaker");
  if (breaker.base === undefined) return own;
  const overridden = new Set([...BREAKER_MODELED, ...breaker.section.props.keys()]);
  return [...own, ...unknownProps(breaker.base, overridden, BREAKER_UNMODELED, "circuit breaker")];
}

/**
 * resilience4j's other modules: their instance of a retry's name decorates the same calls (the
 * Spring Boot aspects run them inside the retry), and none is modelled.
 */
const OTHER_MODULES: Readonly<Record<string, string>> = {
  bulkhead: "a limit on concurrent calls, beyond which calls wait or are refused; our client has no such limit",
  "thread-pool-bulkhead": "a bounded thread pool and queue for the calls, beyond which calls are refused; our client has no such limit",
  ratelimiter: "a limit on calls per period, beyond which calls wait or are refused; our client has no such limit",
  timelimiter:
    "a timeout on each attempt of an asynchronous method (1 s by default, or its config's); not read as our -timeout: the scenario's applies",
};

/** The instances of the other modules that share the retry's name, each named in one line. */
function otherModules(root: unknown, name: string): UnmodeledField[] {
  return Object.entries(OTHER_MODULES).flatMap(([module, why]) => {
    const found =
      lookup(root, ["resilience4j", module, "instances", name], "") ?? lookup(root, ["resilience4j", module, "backends", name], "");
    return found === undefined ? [] : [{ field: found.path, value: valueText(found.node), why }];
  });
}

// ---------------------------------------------------------------------------------------------
// Reading

interface Policy {
  readonly retry: RetryResolved;
  readonly breaker: BreakerResolved | undefined;
  readonly reading: PolicyReading;
}

interface R4jFile {
  readonly doc: Document;
  readonly policies: readonly Policy[];
}

/** Instances are bound from `instances`, or the older `backends`. */
function instancesAt(root: unknown, module: string): Map<string, Section> {
  const instances = sectionsAt(root, ["resilience4j", module, "instances"]);
  return instances.size > 0 ? instances : sectionsAt(root, ["resilience4j", module, "backends"]);
}

function policyOf(
  retry: RetryResolved,
  breakerSection: Section | undefined,
  breakerConfigs: ReadonlyMap<string, Section>,
  root: unknown,
): Policy {
  const breaker = breakerSection === undefined ? undefined : resolveBreaker(breakerSection, breakerConfigs);
  const fields = [...retryFields(retry), ...(breaker === undefined ? [] : breakerFields(breaker))];
  const unmodeled = [
    ...retry.ignored,
    ...retry.chain.flatMap((section) => unknownProps(section, RETRY_MODELED, RETRY_UNMODELED, "retry")),
    ...(breaker === undefined ? [] : breakerUnmodeled(breaker)),
    ...otherModules(root, retry.section.name),
  ];
  return {
    retry,
    breaker,
    reading: {
      name: `retry "${retry.section.name}"${breaker === undefined ? "" : ` with its circuit breaker`} (${retry.section.path})`,
      settings: Object.assign({}, ...fields.map((reading) => reading.settings)) as FlagSettings,
      fields,
      unmodeled,
    },
  };
}

function parseFile(text: string): R4jFile {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.length !== 1)
    throw new ConfigFileError(
      "not one YAML document: a file of several documents (---) is not read; give the one with resilience4j's settings alone",
    );
  const doc = docs[0]!;
  if (doc.errors.length > 0) throw new ConfigFileError(`not YAML: ${doc.errors[0]!.message.split("\n")[0]!.replace(/:$/, "")}`);
  const root = doc.contents;
  const configs = sectionsAt(root, ["resilience4j", "retry", "configs"]);
  const instances = instancesAt(root, "retry");
  // With no instance, the calls of every @Retry use configs.default.
  const retries = instances.size > 0 ? [...instances.values()] : [...configs.values()].filter((section) => section.name === "default");
  if (retries.length === 0)
    throw new ConfigFileError(
      "not a resilience4j configuration: it has no resilience4j.retry.instances or resilience4j.retry.configs.default",
    );
  const breakers = instancesAt(root, "circuitbreaker");
  const breakerConfigs = sectionsAt(root, ["resilience4j", "circuitbreaker", "configs"]);
  return {
    doc,
    policies: retries.map((section) => policyOf(resolveRetry(section, configs), breakers.get(section.name), breakerConfigs, root)),
  };
}

function read(text: string): ConfigReading {
  return { policies: parseFile(text).policies.map((policy) => policy.reading) };
}

// ---------------------------------------------------------------------------------------------
// Writing: the target as resilience4j's properties, then only those that differ

interface RetryTarget {
  readonly interval: IntervalKind;
  readonly waitMs: number;
  readonly multiplier: number;
  readonly factor: number;
  /** Undefined: no ceiling. */
  readonly maxMs: number | undefined;
  readonly attempts: number;
}

interface BreakerTarget {
  readonly type: "COUNT_BASED" | "TIME_BASED";
  readonly size: number;
  readonly minimumCalls: number;
  readonly failureRate: number;
  readonly openMs: number;
}

type Values = Record<string, unknown>;

/** A strategy parameter as the simulator reads it: set, or the strategy's own default. */
function parameter(values: Values, strategy: string, flag: string): number {
  const set = values[flag];
  if (typeof set === "number") return set;
  const shown = findStrategy(strategy)!.parameters[flag as "min-delay"]!;
  return flag === "backoff-factor" || flag === "jitter" ? Number(shown) : parseDuration(shown);
}

function retryTargetOf(values: Values): RetryTarget | string {
  const attempts = values["max-attempts"] as number;
  if (attempts < 1) return "resilience4j needs a number of attempts (maxAttempts, 1 or more); the target has no limit";
  const strategy = findStrategy(values.strategy as string)!.name;
  if (strategy === "fixed")
    return { interval: "constant", waitMs: values["simple-backoff-delay"] as number, multiplier: 1, factor: 0, maxMs: undefined, attempts };
  if (strategy !== "grpc")
    return `resilience4j's waits are constant, or uniform ± a factor, or exponential (x multiplier, capped, randomized or not): -strategy ${strategy} is none of them`;
  const [waitMs, maxMs, multiplier, factor] = (["min-delay", "max-delay", "backoff-factor", "jitter"] as const).map((flag) =>
    parameter(values, strategy, flag),
  ) as [number, number, number, number];
  if (factor >= 1) return `resilience4j's randomizedWaitFactor is below 1; the target's jitter is ${factor}`;
  if (multiplier === 1)
    return {
      interval: factor === 0 ? "constant" : "randomized",
      waitMs: Math.min(waitMs, maxMs),
      multiplier,
      factor,
      maxMs: undefined,
      attempts,
    };
  const interval = factor === 0 ? "exponential" : "exponential-randomized";
  return { interval, waitMs, multiplier, factor, maxMs: maxMs === UNCAPPED_MS ? undefined : maxMs, attempts };
}

function breakerTargetOf(values: Values, current: BreakerResolved | undefined): BreakerTarget | undefined | string {
  const kind = values.breaker as string | undefined;
  if (kind === undefined)
    return current === undefined ? undefined : "the breaker is the code's @CircuitBreaker: its configuration cannot switch it off";
  const openMs = values["breaker-break"] as number;
  if (kind === "consecutive") {
    const failures = values["breaker-failures"] as number;
    return { type: "COUNT_BASED", size: failures, minimumCalls: failures, failureRate: 100, openMs };
  }
  if (kind !== "sampling") return `resilience4j has no ${kind} breaker`;
  const windowMs = values["breaker-window"] as number;
  const minimumCalls = values["breaker-min-throughput"] as number;
  const failureRate = Number(((values["breaker-ratio"] as number) * 100).toPrecision(12));
  // A count-based window whose size our reading made the window's seconds stays count-based.
  if (current?.type.value === "COUNT_BASED" && windowMs === current.size.value * 1000 && failureRate < 100) {
    if (minimumCalls > current.size.value)
      return `a COUNT_BASED window of ${current.size.value} calls cannot wait for ${minimumCalls} calls`;
    return { type: "COUNT_BASED", size: current.size.value, minimumCalls, failureRate, openMs };
  }
  if (windowMs % 1000 !== 0 || windowMs < 1000) return `a TIME_BASED window is whole seconds; the target's is ${ms(windowMs)}`;
  return { type: "TIME_BASED", size: windowMs / 1000, minimumCalls, failureRate, openMs };
}

/** The check flags other than the retry's and the breaker's: resilience4j's retry has none of them. */
const FOREIGN_FLAGS = CHECK_FLAGS.filter(
  (flag) => !/^(strategy|simple-backoff-delay|min-delay|max-delay|backoff-factor|jitter|max-attempts|breaker.*)$/.test(flag),
);

interface Style {
  readonly kebab: boolean;
}

const styled = (name: string, style: Style) => (style.kebab ? name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) : name);

/** Sets one property of a section: in place when present (its comment stays), else as a new last key. */
function setProp(doc: Document, section: Section, name: string, value: unknown, style: Style): void {
  const present = section.props.get(relaxed(name));
  if (present !== undefined && isScalar(present.pair.value)) {
    present.pair.value.value = value;
    return;
  }
  section.map.set(doc.createNode(styled(name, style)), doc.createNode(value));
}

const durationValue = (current: Value<number> | undefined, ms: number) =>
  springDurationText(ms, current?.prop === undefined ? undefined : current.text);

/** The retry properties to write for `want`: all of them (`explicit`), or those whose resolved value differs. */
function retryEdits(current: RetryResolved, want: RetryTarget, explicit: boolean): [string, unknown][] {
  const interval = current.interval;
  const growing = want.interval.startsWith("exponential");
  const randomized = want.interval.endsWith("randomized");
  const edits: [string, unknown][] = [];
  const differs = (value: unknown, wanted: unknown) => explicit || value !== wanted;
  if (differs(current.attempts.value, want.attempts)) edits.push(["maxAttempts", want.attempts]);
  if (differs(interval.wait.value, want.waitMs)) edits.push(["waitDuration", durationValue(interval.wait, want.waitMs)]);
  if (differs(interval.exponential.value, growing)) edits.push(["enableExponentialBackoff", growing]);
  if (differs(interval.randomized.value, randomized)) edits.push(["enableRandomizedWait", randomized]);
  if (growing && differs(interval.multiplier?.value, want.multiplier)) edits.push(["exponentialBackoffMultiplier", want.multiplier]);
  if (randomized && differs(interval.factor?.value, want.factor)) edits.push(["randomizedWaitFactor", want.factor]);
  const maxMs = want.maxMs ?? UNCAPPED_MS;
  if (growing && differs(interval.max?.value ?? UNCAPPED_MS, maxMs) && (want.maxMs !== undefined || interval.max !== undefined))
    edits.push(["exponentialMaxWaitDuration", durationValue(interval.max, maxMs)]);
  return edits;
}

function breakerEdits(current: BreakerResolved | undefined, want: BreakerTarget): [string, unknown][] {
  const edits: [string, unknown][] = [];
  const differs = (value: Value<unknown> | undefined, wanted: unknown) => value === undefined || value.value !== wanted;
  if (differs(current?.type, want.type)) edits.push(["slidingWindowType", want.type]);
  if (differs(current?.size, want.size)) edits.push(["slidingWindowSize", want.size]);
  const minimum = current === undefined ? undefined : effectiveMinimum(current);
  if (minimum !== want.minimumCalls) edits.push(["minimumNumberOfCalls", want.minimumCalls]);
  if (differs(current?.failureRate, want.failureRate)) edits.push(["failureRateThreshold", want.failureRate]);
  if (differs(current?.open, want.openMs)) edits.push(["waitDurationInOpenState", durationValue(current?.open, want.openMs)]);
  return edits;
}

/** Adds the circuit breaker instance `name` with `properties`, and the maps above it that the file lacks. */
function addBreaker(doc: Document, name: string, properties: Readonly<Record<string, unknown>>): void {
  const chain = ["resilience4j", "circuitbreaker", "instances", name];
  let depth = chain.length - 1;
  while (depth > 0 && lookup(doc.contents, chain.slice(0, depth), "") === undefined) depth--;
  const parent = depth === 0 ? doc.contents : lookup(doc.contents, chain.slice(0, depth), "")!.node;
  if (!isMap(parent)) throw new ConfigFileError(`${chain.slice(0, depth).join(".")}: is not allowed, a map of settings is`);
  const made = chain.slice(depth + 1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), properties);
  parent.set(doc.createNode(chain[depth]), doc.createNode(made));
}

const isKebab = (text: string) => /^\s+[a-z]+-[a-z-]+\s*:/m.test(text) && !/^\s+[a-z]+[A-Z][A-Za-z]*\s*:/m.test(text);

const inexpressible = (why: string): Written => ({ kind: "inexpressible", why });

/** Applies the edits for `target` to policy `index` of a fresh parse of `text`; `explicit` writes every retry property. */
function edited(text: string, index: number, retry: RetryTarget, breaker: BreakerTarget | undefined, explicit: boolean): string {
  const file = parseFile(text);
  const policy = file.policies[index]!;
  const style = { kebab: isKebab(text) };
  for (const [name, value] of retryEdits(policy.retry, retry, explicit)) setProp(file.doc, policy.retry.section, name, value, style);
  if (breaker !== undefined) {
    const edits = breakerEdits(policy.breaker, breaker);
    if (policy.breaker !== undefined) for (const [name, value] of edits) setProp(file.doc, policy.breaker.section, name, value, style);
    else addBreaker(file.doc, policy.retry.section.name, Object.fromEntries(edits.map(([name, value]) => [styled(name, style), value])));
  }
  return String(file.doc);
}

function write(text: string, policyIndex: number, target: FlagSettings): Written {
  const policy = parseFile(text).policies[policyIndex];
  if (policy === undefined) throw new Error(`the file has no policy ${policyIndex}`);
  if (sameMeaning(policy.reading.settings, target)) return { kind: "written", text, notes: [] };
  const values = simValuesFor({}, target) as Values;
  const defaults = simDefaults() as Values;
  const foreign = FOREIGN_FLAGS.find((flag) => values[flag] !== defaults[flag]);
  if (foreign !== undefined) return inexpressible(`resilience4j's retry and circuit breaker have no setting for -${foreign}`);
  const retry = retryTargetOf(values);
  if (typeof retry === "string") return inexpressible(retry);
  const breaker = breakerTargetOf(values, policy.breaker);
  if (typeof breaker === "string") return inexpressible(breaker);
  const notes =
    policy.breaker === undefined && breaker !== undefined
      ? [`the circuit breaker acts only where the code calls it: @CircuitBreaker(name = "${policy.retry.section.name}")`]
      : [];
  // The fixed strategy's wait reads back as gRPC's backoff with a multiplier of 1.
  const { "simple-backoff-delay": _fixedWait, ...rest } = target;
  const expected = { ...rest, ...retrySettings(retry) };
  if (values.strategy === "grpc" && !sameMeaning(expected, target))
    notes.push(`with a multiplier of 1 every wait is min(min-delay, max-delay): written as a waitDuration of ${ms(retry.waitMs)}`);
  // Inherited properties may not combine as the minimal edit assumes (an instance's own waitDuration drops its base's interval):
  // when the result does not read as asked, every retry property is written on the instance.
  for (const explicit of [false, true]) {
    const out = edited(text, policyIndex, retry, breaker, explicit);
    const reread = parseFile(out).policies[policyIndex]!.reading.settings;
    if (sameMeaning(reread, expected)) return { kind: "written", text: out, notes };
  }
  throw new Error(`resilience4j write: policy ${policyIndex} does not read back as ${JSON.stringify(expected)}`);
}

/** The flags a retry target reads back as (gRPC's backoff for all four kinds of wait). */
function retrySettings(retry: RetryTarget): FlagSettings {
  const growing = retry.interval.startsWith("exponential");
  return {
    strategy: "grpc",
    "min-delay": ms(retry.waitMs),
    "max-delay": ms(growing ? (retry.maxMs ?? UNCAPPED_MS) : retry.waitMs),
    "backoff-factor": String(retry.multiplier),
    jitter: String(retry.factor),
    "max-attempts": String(retry.attempts),
  };
}

export const resilience4jFormat: ConfigFormat = {
  name: "resilience4j",
  title: "resilience4j Spring Boot configuration (application.yml)",
  source: `${SPRING_DOCS}; ${RETRY_DOCS}; ${BREAKER_DOCS}`,
  recognizes: (text) => /^resilience4j(\.[a-z-]+)*\s*:/im.test(text),
  read,
  write,
  knobs: [
    "max-attempts",
    "min-delay",
    "max-delay",
    "backoff-factor",
    "jitter",
    "breaker",
    "breaker-ratio",
    "breaker-min-throughput",
    "breaker-window",
    "breaker-break",
  ],
};

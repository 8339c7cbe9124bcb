import { diffArrays } from "diff";
import { type Document, isAlias, isScalar, isSeq, parseAllDocuments, parseDocument } from "yaml";
import { parseValue } from "../../cli/flags.ts";
import { DurationSyntaxError, formatDuration, parseDuration } from "../../cli/duration.ts";
import { type FlagSettings, SIM_FLAG_SPECS, simDefaults } from "../../recommend/settings.ts";
import { protoDuration } from "../../recommend/snippets.ts";
import { findStrategy } from "../../strategies/registry.ts";
import { type CheckFlag, ConfigFileError, type FieldReading, type PolicyReading, type UnmodeledField, type Written } from "../format.ts";

/*
 * What Envoy and Istio share (Istio programs Envoy: its VirtualService retries become an Envoy
 * route's retry_policy and its DestinationRule the cluster's circuit breakers), and the small
 * helpers every format of this folder's proxy family needs (gRPC's included): collecting a
 * policy's readings, checking a value, comparing a target with what the file already says, and
 * editing YAML so that only the changed document is printed again.
 */

export const ENVOY_RETRY_POLICY_SOURCE =
  'Envoy API v3 "config.route.v3.RetryPolicy", https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto#envoy-v3-api-msg-config-route-v3-retrypolicy';
export const ENVOY_ROUTER_SOURCE =
  'Envoy "Router" filter, x-envoy-max-retries, https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_filters/router_filter#x-envoy-max-retries';
export const ENVOY_CIRCUIT_BREAKER_SOURCE =
  'Envoy API v3 "config.cluster.v3.CircuitBreakers", https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/circuit_breaker.proto';

/** Envoy's retry_back_off defaults: base 25 ms, max_interval 10 x base. */
export const ENVOY_BASE_INTERVAL_MS = 25;
export const ENVOY_MAX_INTERVAL_TIMES_BASE = 10;
/** Envoy's max_retries circuit breaker when a cluster sets none. */
export const ENVOY_DEFAULT_MAX_RETRIES = 3;
/** A UInt32 at its largest: Istio's max_retries when a DestinationRule sets none, no limit in practice. */
export const UINT32_MAX = 4_294_967_295;

/**
 * Our envoy budget's share for a limit with none, only a fixed number of retries in progress
 * (Envoy's max_retries, or budget_percent 0): src/backoff/envoy-budget.ts refuses 0, and this
 * share allows no retry beyond the minimum while fewer than a million requests are in progress.
 */
export const NO_SHARE_PERCENT = "0.0001";

export const ENVOY_BACKOFF_APPROXIMATION =
  "Envoy's code (source/common/common/backoff_strategy.cc, JitteredExponentialBackOffStrategy) waits U(0, min(base x 2^(n-1), " +
  "max_interval)) in whole milliseconds, our full-jitter; its router documentation still describes U(0, (2^n - 1) x base) " +
  "(0-24 ms, 0-74 ms, 0-174 ms for 25 ms), by which the 2nd retry on would wait up to 1.5x to 2x longer";

const BUDGET_SCOPE =
  "Envoy counts the retries and requests in progress of every client of this proxy to the cluster; our budget counts those of one " +
  "client instance (-instances), the same when the scenario's instances stand for the proxies";

/** One policy's readings as they are found, merged into its settings. */
export class PolicyBuilder {
  private readonly settings: Record<string, string> = {};
  private readonly fields: FieldReading[] = [];
  private readonly unmodeled: UnmodeledField[] = [];

  read(field: string, value: string, settings: FlagSettings, source: string, approximation?: string): this {
    this.fields.push({ field, value, settings, source, ...(approximation === undefined ? {} : { approximation }) });
    Object.assign(this.settings, settings);
    return this;
  }

  skip(field: string, value: unknown, why: string): this {
    this.unmodeled.push({ field, value: shown(value), why });
    return this;
  }

  build(name: string): PolicyReading {
    return { name, settings: { ...this.settings }, fields: [...this.fields], unmodeled: [...this.unmodeled] };
  }
}

/** A number that is none, in words: not a number, or an infinity with its sign (past the double's range, or YAML's .inf). */
export function notFinite(value: number): string {
  if (Number.isNaN(value)) return "not a number";
  return `${value < 0 ? "minus " : ""}infinity (or a number beyond 1.8e308)`;
}

/** A value as a one-line text for a reading. */
export function shown(value: unknown): string {
  if (typeof value === "string") return value;
  // JSON would print a number that is none (YAML's .nan, .inf, or one past the double's range) as null.
  if (typeof value === "number" && !Number.isFinite(value)) return notFinite(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `default (25ms)`, for a field absent whose documented default applies. */
export const defaulted = (text: string): string => `default (${text})`;

export const ms = (value: number): string => formatDuration(value);

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** An object at `field`, or a ConfigFileError saying what it must be. */
export function objectAt(value: unknown, field: string, what: string): JsonObject {
  if (!isObject(value)) throw new ConfigFileError(`${field}: must be an object (${what}), got ${shown(value)}`);
  return value;
}

/** A list at `field`, or a ConfigFileError. */
export function listAt(value: unknown, field: string, what: string): unknown[] {
  if (!Array.isArray(value)) throw new ConfigFileError(`${field}: must be a list (${what}), got ${shown(value)}`);
  return value;
}

/** A whole number in [min, max] at `field`; `quoted` takes one in a string too, as proto3's JSON mapping does for Envoy. */
export function integerAt(value: unknown, field: string, min: number, max = UINT32_MAX, quoted = true): number {
  const number = quoted && typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < min || number > max) {
    throw new ConfigFileError(`${field}: must be a whole number from ${min} to ${max}, got ${shown(value)}`);
  }
  return number;
}

/** A number above `above` (or at least `min`) and at most `max` at `field`. */
export function numberAt(value: unknown, field: string, bounds: { above?: number; min?: number; max?: number }): number {
  const inRange =
    typeof value === "number" &&
    Number.isFinite(value) &&
    (bounds.above === undefined || value > bounds.above) &&
    (bounds.min === undefined || value >= bounds.min) &&
    (bounds.max === undefined || value <= bounds.max);
  if (!inRange) {
    const low = bounds.above !== undefined ? `above ${bounds.above}` : `at least ${bounds.min ?? "-Infinity"}`;
    const high = bounds.max === undefined ? "" : ` and at most ${bounds.max}`;
    throw new ConfigFileError(`${field}: must be a number ${low}${high}, got ${shown(value)}`);
  }
  return value;
}

const PROTO_DURATION = /^(\d+)(\.\d{1,9})?s$/;

/** A protobuf JSON duration ("0.025s", as Envoy and gRPC read them) in milliseconds, or a ConfigFileError. */
export function protoDurationAt(value: unknown, field: string, positive = true): number {
  const match = typeof value === "string" ? PROTO_DURATION.exec(value) : null;
  const msValue = match === null ? Number.NaN : parseDuration(value as string);
  if (Number.isNaN(msValue) || (positive && msValue <= 0)) {
    throw new ConfigFileError(
      `${field}: must be a ${positive ? "positive " : ""}protobuf JSON duration, seconds with up to 9 decimals and an "s" (e.g. "0.025s"), got ${shown(value)}`,
    );
  }
  return msValue;
}

/** A Go-style duration ("25ms", "1.5s", "1m", as Istio reads them) in milliseconds, or a ConfigFileError. */
export function goDurationAt(value: unknown, field: string, minMs: number): number {
  let msValue = Number.NaN;
  if (typeof value === "string") {
    try {
      msValue = parseDuration(value);
    } catch (error) {
      if (!(error instanceof DurationSyntaxError)) throw error;
    }
  }
  if (Number.isNaN(msValue) || msValue < minMs) {
    throw new ConfigFileError(`${field}: must be a duration of at least ${ms(minMs)} such as "25ms" or "1.5s", got ${shown(value)}`);
  }
  return msValue;
}

/** A duration field of the file, or where its default applies (ms undefined). */
export interface DurationField {
  readonly field: string;
  readonly ms: number | undefined;
  /** As the file writes it, when present. */
  readonly text?: string;
  readonly source: string;
}

/** Envoy's backoff as our full-jitter: both intervals explicit, each from the file or its default. */
export function envoyBackoffReadings(builder: PolicyBuilder, base: DurationField, max: DurationField, maxDefaultWhy = ""): void {
  const baseMs = Math.max(1, base.ms ?? ENVOY_BASE_INTERVAL_MS);
  const baseRounded = base.ms !== undefined && base.ms < 1 ? "; Envoy rounds a base under 1 ms up to 1 ms" : "";
  builder.read(
    base.field,
    base.text ?? defaulted(ms(ENVOY_BASE_INTERVAL_MS)),
    { strategy: "full-jitter", "min-delay": ms(baseMs) },
    base.source,
    ENVOY_BACKOFF_APPROXIMATION + baseRounded,
  );
  const maxMs = max.ms ?? baseMs * ENVOY_MAX_INTERVAL_TIMES_BASE;
  builder.read(
    max.field,
    max.text ?? defaulted(`${ENVOY_MAX_INTERVAL_TIMES_BASE} x base interval, ${ms(maxMs)}${maxDefaultWhy}`),
    { "max-delay": ms(maxMs) },
    max.source,
  );
}

/** The limit on retries in progress that an Envoy cluster (or Istio's DestinationRule) sets. */
export type RetryLimit =
  | { readonly kind: "budget"; readonly percent: number; readonly minConcurrency: number }
  | { readonly kind: "max-retries"; readonly maxRetries: number };

/** A limit as our envoy budget's settings; none when it cannot bind (max_retries at UInt32's largest). */
export function limitSettings(limit: RetryLimit): FlagSettings {
  if (limit.kind === "max-retries") {
    if (limit.maxRetries >= UINT32_MAX) return {};
    return { budget: "envoy", "budget-percent": NO_SHARE_PERCENT, "budget-min-concurrency": String(limit.maxRetries) };
  }
  const percent = limit.percent === 0 ? NO_SHARE_PERCENT : String(limit.percent);
  return { budget: "envoy", "budget-percent": percent, "budget-min-concurrency": String(limit.minConcurrency) };
}

/** Why a limit reads as it does, beyond its source: the scope, and a zero share's stand-in. */
export function limitApproximation(limit: RetryLimit): string {
  if (limit.kind === "max-retries" && limit.maxRetries >= UINT32_MAX)
    return "a limit of 2^32 - 1 retries in progress never binds: no budget";
  const zeroShare = limit.kind === "max-retries" || limit.percent === 0;
  return (
    BUDGET_SCOPE +
    (zeroShare
      ? `; a fixed number of retries in progress is our envoy budget with -budget-percent ${NO_SHARE_PERCENT} (0 is refused), exact below a million requests in progress`
      : "")
  );
}

/** What a target says of the limit on retries in progress, in Envoy's terms; a string says why it cannot be said. */
export type TargetLimit = { readonly kind: "none" } | RetryLimit;

export function targetLimit(target: FlagSettings, system: string): TargetLimit | string {
  const budget = target.budget;
  if (budget === undefined || budget === "") return { kind: "none" };
  if (budget !== "envoy") return `${system} limits retries by Envoy's retry budget or max_retries only; it cannot say -budget ${budget}`;
  const percent = Number(effective(target, "budget-percent"));
  const minConcurrency = Number(effective(target, "budget-min-concurrency"));
  if (percent === Number(NO_SHARE_PERCENT)) return { kind: "max-retries", maxRetries: minConcurrency };
  return { kind: "budget", percent, minConcurrency };
}

/** Whether two limits read the same (max_retries N and a zero-share budget of N are one limit). */
export function sameLimit(a: TargetLimit, b: TargetLimit): boolean {
  const settingsOf = (limit: TargetLimit) => (limit.kind === "none" ? {} : limitSettings(limit));
  return JSON.stringify(settingsOf(a)) === JSON.stringify(settingsOf(b));
}

/** The value a target means for a flag: its own, else its strategy's default for the parameter, else the simulator's default. */
export function effective(target: FlagSettings, flag: string): string | undefined {
  const own = target[flag];
  if (own !== undefined) return own;
  const strategy = findStrategy(target.strategy ?? "fixed");
  const parameter = (strategy?.parameters as Readonly<Record<string, string>> | undefined)?.[flag];
  if (parameter !== undefined) return parameter;
  const value = (simDefaults() as Record<string, unknown>)[flag];
  const spec = SIM_FLAG_SPECS.get(flag);
  if (value === undefined || spec === undefined) return undefined;
  return spec.kind === "duration" && typeof value === "number" ? ms(value) : String(value);
}

/** A flag's value as its flag parses it (milliseconds for a duration), for comparing two spellings. */
export function parsedFlag(flag: string, value: string | undefined): unknown {
  const spec = SIM_FLAG_SPECS.get(flag);
  return spec === undefined || value === undefined ? value : parseValue(spec, value);
}

/** Whether two settings mean the same for `flag`, each with its defaults. */
export function sameFlag(flag: string, a: FlagSettings, b: FlagSettings): boolean {
  return parsedFlag(flag, effective(a, flag)) === parsedFlag(flag, effective(b, flag));
}

/** The first flag a target sets to other than its default that the format cannot say, as the reason; undefined when none. */
export function unsayable(target: FlagSettings, sayable: readonly string[], system: string): string | undefined {
  const defaults = simDefaults() as Record<string, unknown>;
  for (const [flag, value] of Object.entries(target)) {
    if (sayable.includes(flag)) continue;
    const spec = SIM_FLAG_SPECS.get(flag);
    if (spec !== undefined && spec.default !== undefined && parseValue(spec, value) === defaults[flag]) continue;
    return `${system} has no field for -${flag} ${value}`;
  }
  return undefined;
}

/** The flags Envoy's and Istio's write can say. */
export const ENVOY_SAYABLE: readonly CheckFlag[] = [
  "strategy",
  "min-delay",
  "max-delay",
  "max-attempts",
  "timeout",
  "budget",
  "budget-percent",
  "budget-min-concurrency",
];

/** Why a target's backoff is not Envoy's, or undefined when it is (full jitter, a max not below the base). */
export function envoyBackoffProblem(target: FlagSettings, system: string): string | undefined {
  const strategy = target.strategy ?? "fixed";
  if (strategy !== "full-jitter")
    return `${system}'s backoff is always fully jittered and doubling (our full-jitter); it cannot say -strategy ${strategy}`;
  return undefined;
}

/** A protobuf JSON duration for a setting, and a note when it had to be rounded to whole milliseconds (at least 1). */
export function protoDurationFor(flagValue: string, what: string, notes: string[]): string {
  const msValue = parseDuration(flagValue);
  const written = protoDuration(msValue);
  if (parseDuration(written) !== msValue) notes.push(`${what} is written in whole milliseconds, at least 1: ${written} for ${flagValue}`);
  return written;
}

/** Parsed YAML documents, or a ConfigFileError with the first syntax error's line. */
export function yamlDocuments(text: string): Document.Parsed[] {
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents)) return [parseDocument(text)];
  for (const document of documents) {
    const error = document.errors[0];
    if (error !== undefined) {
      const line = error.linePos?.[0]?.line;
      throw new ConfigFileError(`${line === undefined ? "" : `line ${line}: `}not valid YAML: ${error.message.split("\n")[0]}`);
    }
  }
  return documents;
}

export type YamlPath = readonly (string | number)[];

/** A write that would go through a YAML anchor or alias: what several places of the file share. */
export class SharedInYaml extends Error {
  override name = "SharedInYaml";
}

/** Refuses a path through an anchored node or an alias: changing it would change every place that shares it, unannounced. */
function refuseShared(document: Document, path: YamlPath): void {
  for (let length = 1; length <= path.length; length++) {
    const node = document.getIn(path.slice(0, length), true);
    const anchor = isAlias(node) ? node.source : (node as { anchor?: string } | undefined)?.anchor;
    if (anchor !== undefined) {
      throw new SharedInYaml(
        `${path.slice(0, length).join(".")} is shared through the YAML anchor &${anchor}: check does not change what several places share`,
      );
    }
  }
}

/** Sets the value at `path`, keeping an existing scalar's node (its comment and quoting) and creating maps on the way. */
export function setYaml(document: Document, path: YamlPath, value: string | number): void {
  refuseShared(document, path);
  const node = document.getIn(path, true);
  if (isScalar(node)) node.value = value;
  else document.setIn(path, value);
}

/** Deletes the value at `path`, as setYaml sets one: never through what an anchor or alias shares. */
export function deleteYaml(document: Document, path: YamlPath): void {
  refuseShared(document, path);
  document.deleteIn(path);
}

/** Appends an item to the list at `path`, creating the list when it is absent. */
export function appendYaml(document: Document, path: YamlPath, item: unknown): void {
  refuseShared(document, path);
  const node = document.getIn(path, true);
  if (isSeq(node)) node.add(document.createNode(item));
  else document.setIn(path, [item]);
}

/** How the printer should lay the document out to look like the user's: sequences indented under their key or not. */
function printOptions(original: string) {
  const flushSequence = /^( *)[^\s#-][^\n]*:[ \t]*(#[^\n]*)?\n\1- /m.test(original);
  return { lineWidth: 0, indentSeq: !flushSequence } as const;
}

/**
 * The text with the documents at `changed` printed again, and every other document's text as it
 * was: each document owns the text from the end of the one before to its own end. Within a
 * changed document the lines the edit left alone keep the user's own spelling (the printer's
 * spacing of flow collections and quoting may differ from it), when the printer kept its lines
 * and the result still reads as the edited document; else the document as printed.
 */
export function spliceDocuments(text: string, documents: readonly Document.Parsed[], changed: ReadonlySet<number>): string {
  const before = changed.size === 0 ? [] : yamlDocuments(text);
  let out = "";
  let start = 0;
  documents.forEach((document, index) => {
    const end = document.range[2];
    const original = text.slice(start, end);
    if (changed.has(index)) {
      const options = printOptions(original);
      const edited = document.toString(options);
      const kept = keepUntouchedLines(original, before[index]!.toString(options), edited);
      out += sameYaml(kept, edited) ? kept : edited;
    } else {
      out += original;
    }
    start = end;
  });
  return out + text.slice(start);
}

function sameYaml(a: string, b: string): boolean {
  const parsed = (text: string) => {
    const document = parseDocument(text);
    return document.errors.length > 0 ? undefined : JSON.stringify(document.toJS());
  };
  const left = parsed(a);
  return left !== undefined && left === parsed(b);
}

/** `edited` with each line that is the same in `printed` (the unedited document, printed) taken from `original`. */
function keepUntouchedLines(original: string, printed: string, edited: string): string {
  const originalLines = original.split("\n");
  const printedLines = printed.split("\n");
  if (originalLines.length !== printedLines.length) return edited;
  const out: string[] = [];
  let line = 0;
  for (const part of diffArrays(printedLines, edited.split("\n"))) {
    if (part.added) out.push(...part.value);
    else if (part.removed) line += part.value.length;
    else {
      out.push(...originalLines.slice(line, line + part.value.length));
      line += part.value.length;
    }
  }
  return out.join("\n");
}

/** A format's write, with a write through a YAML anchor or alias said as inexpressible (the file keeps what it shares). */
export function unlessShared(write: (text: string, policyIndex: number, target: FlagSettings) => Written) {
  return (text: string, policyIndex: number, target: FlagSettings): Written => {
    try {
      return write(text, policyIndex, target);
    } catch (error) {
      if (error instanceof SharedInYaml) return { kind: "inexpressible", why: error.message };
      throw error;
    }
  };
}

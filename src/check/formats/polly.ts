import type { JSONPath } from "jsonc-parser";
import type { BackoffPolicy } from "../../backoff/policy.ts";
import { exactWaitsOf } from "../../backoff/policies.ts";
import type { FlagSettings } from "../../recommend/settings.ts";
import { ConfigFileError, type ConfigFormat, type PolicyReading } from "../format.ts";
import {
  decorrelatedNote,
  defaultText,
  type Edit,
  isObject,
  jsonFormat,
  type Json,
  type JsonObject,
  ms,
  PolicyRecorder,
  type ResolvedTarget,
  shortestNumber,
  unsupportedMechanisms,
  valueAt,
  valueText,
} from "./json-options.ts";

/*
 * Polly v8's retry, circuit breaker and timeout options as an appsettings.json binds them. Two
 * shapes are policies, wherever they sit in the file:
 * - HttpStandardResilienceOptions (Microsoft.Extensions.Http.Resilience, what
 *   AddStandardResilienceHandler(section) binds): an object of the sections Retry, CircuitBreaker,
 *   AttemptTimeout, TotalRequestTimeout and RateLimiter. Its retry has the HTTP defaults
 *   (Exponential, with jitter) and its circuit breaker is always there;
 * - a bare RetryStrategyOptions section (an object with MaxRetryAttempts, BackoffType or
 *   UseJitter), read with Polly's own defaults (Constant, no jitter).
 * .NET's configuration binder matches keys without regard to case, reads every value as text
 * (so a JSON number or a string both bind), parses a TimeSpan with TimeSpan.Parse (a bare number
 * is days), an enum by name or number, a bool as true or false in any case.
 */

const RETRY_DOCS = 'Polly docs, "Retry resilience strategy", https://www.pollydocs.org/strategies/retry';
const RETRY_API = 'Polly API, "RetryStrategyOptions<TResult>", https://www.pollydocs.org/api/Polly.Retry.RetryStrategyOptions-1.html';
const RETRY_HELPER =
  "Polly.Core RetryHelper.cs (Constant: Delay, x U(0.75, 1.25) with jitter; Linear: n x Delay; Exponential: Delay x 2^(n-1), with " +
  "jitter DecorrelatedJitterBackoffV2; then at most MaxDelay), https://github.com/App-vNext/Polly/blob/main/src/Polly.Core/Retry/RetryHelper.cs";
const BREAKER_DOCS = 'Polly docs, "Circuit breaker resilience strategy", https://www.pollydocs.org/strategies/circuit-breaker';
const TIMEOUT_DOCS = 'Polly docs, "Timeout resilience strategy", https://www.pollydocs.org/strategies/timeout';
const STANDARD_DOCS =
  'Microsoft Learn, "Build resilient HTTP apps: Key development patterns" (the standard resilience handler), ' +
  "https://learn.microsoft.com/en-us/dotnet/core/resilience/http-resilience";
const HTTP_RETRY_SOURCE =
  "Microsoft.Extensions.Http.Resilience HttpRetryStrategyOptions (BackoffType Exponential, UseJitter true, ShouldRetryAfterHeader true), " +
  "https://github.com/dotnet/extensions/blob/main/src/Libraries/Microsoft.Extensions.Http.Resilience/Polly/HttpRetryStrategyOptions.cs";
const TIMESPAN_FORMAT = 'a TimeSpan as .NET\'s configuration binder reads it, "hh:mm:ss[.fffffff]" (e.g. "00:00:02" for 2 seconds)';

const SECTIONS = ["Retry", "CircuitBreaker", "AttemptTimeout", "TotalRequestTimeout", "RateLimiter"] as const;
const RETRY_KEYS = ["MaxRetryAttempts", "BackoffType", "UseJitter"];
const BACKOFF_TYPES = ["Constant", "Linear", "Exponential"] as const;
type BackoffType = (typeof BACKOFF_TYPES)[number];

/** Polly retries forever at int.MaxValue ("Use int.MaxValue to retry indefinitely"). */
const INT_MAX = 2_147_483_647;
const DAY_MS = 86_400_000;
const TICKS_PER_MS = 10_000;
/** Polly's delays are at most TimeSpan.MaxValue (RetryHelper.cs): its "no MaxDelay". */
const TIMESPAN_MAX_MS = Number(9_223_372_036_854_775_807n) / TICKS_PER_MS;

/** The member of an object whose key matches without regard to case, as the configuration binder matches it. */
function member(object: JsonObject, name: string): [string, Json] | undefined {
  const key = Object.keys(object).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : [key, object[key]!];
}

const isPipeline = (object: JsonObject): boolean =>
  Object.keys(object).length > 0 &&
  Object.entries(object).every(([key, value]) => SECTIONS.some((name) => name.toLowerCase() === key.toLowerCase()) && isObject(value));

const isBareRetry = (object: JsonObject): boolean => RETRY_KEYS.some((key) => member(object, key) !== undefined);

interface Found {
  readonly path: JSONPath;
  readonly standard: boolean;
}

/** Every policy of the file, depth first in the file's order. */
function findPolicies(root: Json, path: JSONPath = []): Found[] {
  if (!isObject(root)) return [];
  if (isPipeline(root)) return [{ path, standard: true }];
  if (isBareRetry(root)) return [{ path, standard: false }];
  return Object.entries(root).flatMap(([key, value]) => findPolicies(value, [...path, key]));
}

function policies(root: Json): Found[] {
  const found = findPolicies(root);
  if (found.length === 0)
    throw new ConfigFileError(
      "no Polly retry options found: expected an HttpStandardResilienceOptions section (Retry, CircuitBreaker, AttemptTimeout, " +
        "TotalRequestTimeout) or a RetryStrategyOptions section (MaxRetryAttempts, BackoffType, UseJitter)",
    );
  return found;
}

/** A configuration key path as .NET writes it: `HttpClients:Catalog:Retry:Delay`. */
const configKey = (path: JSONPath): string => path.map(String).join(":");

/** The text a value binds as. */
function boundText(value: Json, field: string): string {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a value the configuration binder reads here, a string or a number`);
}

/** [-]{ d | [d.]hh:mm[:ss[.f]] }, or the general format's d:hh:mm:ss[.f]: digits in any number, ranges checked after. */
const TIMESPAN = /^(-)?(?:(\d+)\.)?(\d+(?::\d+){0,3})(?:\.(\d{1,7}))?$/;

/**
 * The days, hours, minutes and seconds of a TimeSpan's colon-separated parts, or undefined for a
 * shape TimeSpan.Parse refuses. As .NET does, hours of 24 or more in `hh:mm:ss` make it `d:hh:mm`.
 */
function timeSpanParts(dotDays: string | undefined, clock: readonly number[], fraction: boolean): number[] | undefined {
  if (clock.length === 1) return dotDays === undefined && !fraction ? [clock[0]!, 0, 0, 0] : undefined;
  if (dotDays !== undefined)
    return clock.length <= 3 && (clock.length === 3 || !fraction) ? [Number(dotDays), ...clock, 0, 0].slice(0, 4) : undefined;
  if (clock.length === 2) return fraction ? undefined : [0, ...clock, 0];
  if (clock.length === 3) return clock[0]! > 23 && !fraction ? [...clock, 0] : [0, ...clock];
  return [...clock];
}

/**
 * TimeSpan.Parse with the invariant culture (Microsoft Learn, "System.TimeSpan.Parse method"), in
 * milliseconds: `[-]{ d | [d.]hh:mm[:ss[.fffffff]] }` or `d:hh:mm:ss`; "24:00:00" is 24 days.
 */
export function parseTimeSpan(value: Json, field: string): number {
  const text = boundText(value, field);
  const match = TIMESPAN.exec(text);
  const wrong = (what: string) => new ConfigFileError(`${field}: ${JSON.stringify(value)} ${what}, ${TIMESPAN_FORMAT}`);
  const parts = match === null ? undefined : timeSpanParts(match[2], match[3]!.split(":").map(Number), match[4] !== undefined);
  if (match === null || parts === undefined) throw wrong("is not a TimeSpan");
  const [days, hours, minutes, seconds] = parts as [number, number, number, number];
  if (hours > 23 || minutes > 59 || seconds > 59) throw wrong("is out of range (hours to 23, minutes and seconds to 59)");
  const ticks = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1e7 + Number((match[4] ?? "").padEnd(7, "0"));
  return (match[1] === "-" ? -ticks : ticks) / TICKS_PER_MS;
}

/** Milliseconds as a TimeSpan's text ("c" format, the fraction's trailing zeros left out): `00:00:02`, `00:00:00.25`, `1.00:00:00`. */
export function formatTimeSpan(valueMs: number): string {
  const ticks = Math.round(valueMs * TICKS_PER_MS);
  const two = (value: number) => String(value).padStart(2, "0");
  const seconds = Math.floor(ticks / 1e7);
  const fraction = String(ticks % 1e7)
    .padStart(7, "0")
    .replace(/0+$/, "");
  const days = Math.floor(seconds / 86_400);
  const clock = `${two(Math.floor(seconds / 3600) % 24)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
  return `${days > 0 ? `${days}.` : ""}${clock}${fraction === "" ? "" : `.${fraction}`}`;
}

function timeSpanIn(value: Json, field: string, minMs: number, maxMs: number, allowed: string): number {
  const parsed = parseTimeSpan(value, field);
  if (parsed < minMs || parsed > maxMs)
    throw new ConfigFileError(
      `${field}: ${JSON.stringify(value)} (${formatTimeSpan(parsed)} to TimeSpan.Parse) is ${parsed < minMs ? "below" : "above"} what Polly's validation allows, ${allowed}`,
    );
  return parsed;
}

function integerIn(value: Json, field: string, min: number, allowed: string): number {
  const text = boundText(value, field);
  if (!/^[+-]?\d+$/.test(text)) throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a whole number, ${allowed}`);
  const parsed = Number(text);
  if (parsed < min || parsed > INT_MAX) throw new ConfigFileError(`${field}: ${parsed} is out of range, ${allowed}`);
  return parsed;
}

function ratioIn(value: Json, field: string): number {
  const text = boundText(value, field);
  const parsed = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN;
  const allowed = "a failure ratio above 0, up to 1 (0.1 is 10 %)";
  if (Number.isNaN(parsed)) throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a number, ${allowed}`);
  if (parsed <= 0 || parsed > 1) throw new ConfigFileError(`${field}: ${parsed} is out of range, ${allowed}`);
  return parsed;
}

function booleanIn(value: Json, field: string): boolean {
  const text = boundText(value, field).toLowerCase();
  if (text !== "true" && text !== "false") throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a boolean, true or false`);
  return text === "true";
}

function backoffTypeIn(value: Json, field: string): BackoffType {
  const text = boundText(value, field);
  const named = BACKOFF_TYPES.find((type) => type.toLowerCase() === text.toLowerCase());
  const numbered = /^\d+$/.test(text) ? BACKOFF_TYPES[Number(text)] : undefined;
  const type = named ?? numbered;
  if (type === undefined)
    throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a DelayBackoffType, ${BACKOFF_TYPES.join(", ")}`);
  return type;
}

/** A section of a policy: its members found without regard to case, and how to name them. */
class Section {
  readonly raw: JsonObject;
  readonly path: JSONPath;

  constructor(raw: JsonObject, path: JSONPath) {
    this.raw = raw;
    this.path = path;
  }

  get(name: string): Json | undefined {
    return member(this.raw, name)?.[1];
  }

  /** The path of a member: the file's own key where it has one, else Polly's name for it. */
  pathOf(name: string): JSONPath {
    return [...this.path, member(this.raw, name)?.[0] ?? name];
  }

  at(name: string): string {
    return this.pathOf(name).map(String).join(".");
  }

  shown(name: string, fallback: string): string {
    const value = this.get(name);
    return value === undefined ? defaultText(fallback) : valueText(value);
  }

  /** Members not in `known`: named, with what the binder makes of them. */
  others(known: readonly string[], what: string, recorder: PolicyRecorder, why: Readonly<Record<string, string>> = {}): void {
    for (const [key, value] of Object.entries(this.raw)) {
      const name = known.find((candidate) => candidate.toLowerCase() === key.toLowerCase());
      if (name !== undefined) continue;
      const reason = Object.entries(why).find(([candidate]) => candidate.toLowerCase() === key.toLowerCase())?.[1];
      recorder.notModelled(this.at(key), value, reason ?? `not a property of ${what}; the configuration binder ignores it`);
    }
  }
}

function sectionOf(policy: Section, name: string): Section {
  const found = member(policy.raw, name);
  return new Section(found !== undefined && isObject(found[1]) ? found[1] : {}, policy.pathOf(name));
}

interface RetryOptions {
  /** Retries after the first call; INT_MAX for no limit. */
  readonly retries: number;
  readonly type: BackoffType;
  readonly jitter: boolean;
  readonly delayMs: number;
  readonly maxDelayMs: number | undefined;
}

function retryOptions(retry: Section, standard: boolean): RetryOptions {
  const value = (name: string) => retry.get(name);
  const maxDelay = value("MaxDelay");
  return {
    retries:
      value("MaxRetryAttempts") === undefined
        ? 3
        : integerIn(value("MaxRetryAttempts")!, retry.at("MaxRetryAttempts"), 1, "retries after the first call, 1 to 2147483647"),
    type:
      value("BackoffType") === undefined
        ? standard
          ? "Exponential"
          : "Constant"
        : backoffTypeIn(value("BackoffType")!, retry.at("BackoffType")),
    jitter: value("UseJitter") === undefined ? standard : booleanIn(value("UseJitter")!, retry.at("UseJitter")),
    delayMs: value("Delay") === undefined ? 2000 : timeSpanIn(value("Delay")!, retry.at("Delay"), 0, DAY_MS, "00:00:00 to 1.00:00:00"),
    maxDelayMs: maxDelay === undefined ? undefined : timeSpanIn(maxDelay, retry.at("MaxDelay"), 0, DAY_MS, "00:00:00 to 1.00:00:00"),
  };
}

/** Our settings for Polly's waits, by the field that sets them, and where ours differ. */
interface WaitSettings {
  readonly type: FlagSettings;
  readonly delay: FlagSettings;
  readonly maxDelay: FlagSettings;
  readonly approximation?: string;
}

/** The most table entries a Linear backoff is read into; later retries wait the last entry. */
const LINEAR_ENTRIES = 100;

function linearSettings(options: RetryOptions, capMs: number): WaitSettings {
  const entries = Math.min(options.retries, LINEAR_ENTRIES);
  const waits = Array.from({ length: entries }, (_, index) => Math.min((index + 1) * options.delayMs, capMs));
  const saturates = options.retries > LINEAR_ENTRIES && waits.at(-1)! < capMs;
  return {
    type: { strategy: "table" },
    delay: { table: [0, ...waits].map((wait) => String(shortestNumber(wait))).join(",") },
    maxDelay: {},
    approximation:
      `Polly waits n x Delay${options.jitter ? " x U(0.75, 1.25)" : ""}; we have no linear strategy, and our table strategy draws each ` +
      "entry m uniformly in [m/2, 1.5m): the same mean, a wider spread" +
      (saturates ? `; after ${LINEAR_ENTRIES} retries it keeps the last entry where Polly keeps growing` : ""),
  };
}

function waitSettings(options: RetryOptions): WaitSettings {
  const capMs = options.maxDelayMs ?? TIMESPAN_MAX_MS;
  const delayMs = options.delayMs;
  // RetryHelper: a zero Delay is a zero wait, whatever the type.
  const fixed = (waitMs: number): WaitSettings => ({
    type: { strategy: "fixed" },
    delay: { "simple-backoff-delay": ms(waitMs) },
    maxDelay: {},
  });
  if (delayMs === 0) return fixed(0);
  if (options.type === "Linear") return linearSettings(options, capMs);
  if (options.type === "Constant" && !options.jitter) return fixed(Math.min(delayMs, capMs));
  if (options.type === "Constant") {
    const waitMs = Math.min(delayMs, capMs);
    return {
      type: { strategy: "grpc", "backoff-factor": "1", jitter: "0.25" },
      delay: { "min-delay": ms(waitMs) },
      maxDelay: { "max-delay": ms(waitMs) },
      ...(capMs < 1.25 * delayMs
        ? {
            approximation:
              "Polly cuts its jittered waits, Delay x U(0.75, 1.25), at MaxDelay; ours spreads ±25 % about the smaller of the two",
          }
        : {}),
    };
  }
  if (!options.jitter)
    return capMs <= delayMs
      ? fixed(capMs)
      : {
          type: { strategy: "grpc", "backoff-factor": "2", jitter: "0" },
          delay: { "min-delay": ms(delayMs) },
          maxDelay: { "max-delay": ms(capMs) },
        };
  return {
    type: { strategy: "decorrelated-jitter" },
    delay: { "min-delay": ms(Math.min(delayMs, capMs)) },
    maxDelay: { "max-delay": ms(capMs) },
    approximation: decorrelatedNote("Polly's Exponential backoff with UseJitter", 2, delayMs, options.retries),
  };
}

const RETRY_PROPERTIES = ["MaxRetryAttempts", "BackoffType", "UseJitter", "Delay", "MaxDelay"];
const RETRY_UNMODELED = {
  ShouldRetryAfterHeader:
    "waits a Retry-After header's time instead of the backoff (true by default in the standard handler); not part of what check simulates",
  Name: "names the strategy in telemetry and logs",
};

function readRetry(retry: Section, standard: boolean, recorder: PolicyRecorder): void {
  const options = retryOptions(retry, standard);
  const waits = waitSettings(options);
  const typeSource = standard ? HTTP_RETRY_SOURCE : RETRY_API;
  recorder.field(
    retry.at("MaxRetryAttempts"),
    retry.shown("MaxRetryAttempts", "3"),
    { "max-attempts": options.retries === INT_MAX ? "0" : String(options.retries + 1) },
    RETRY_DOCS,
    options.retries === INT_MAX ? "int.MaxValue retries: Polly's way of retrying indefinitely, our -max-attempts 0" : undefined,
  );
  // A Linear backoff is read as our table whatever its jitter: the note goes with its Delay, which a write of a table changes.
  const jitterNote = options.jitter && options.type !== "Linear" ? waits.approximation : undefined;
  const delayNote = options.type === "Linear" ? waits.approximation : undefined;
  // A bare section's defaults are those of the options class it is bound to, which the file does not say.
  const bareDefault =
    !standard && (retry.get("BackoffType") === undefined || retry.get("UseJitter") === undefined)
      ? "read with Polly's RetryStrategyOptions defaults (Constant, no jitter); bound to an HttpRetryStrategyOptions they are Exponential with jitter"
      : undefined;
  recorder.field(
    retry.at("BackoffType"),
    retry.shown("BackoffType", standard ? "Exponential" : "Constant"),
    waits.type,
    typeSource,
    bareDefault,
  );
  recorder.field(retry.at("UseJitter"), retry.shown("UseJitter", standard ? "true" : "false"), {}, RETRY_HELPER, jitterNote);
  recorder.field(retry.at("Delay"), retry.shown("Delay", "00:00:02"), waits.delay, RETRY_API, delayNote);
  recorder.field(
    retry.at("MaxDelay"),
    retry.shown("MaxDelay", "none"),
    waits.maxDelay,
    RETRY_API,
    options.maxDelayMs === undefined && waits.maxDelay["max-delay"] !== undefined
      ? "no MaxDelay: read as TimeSpan.MaxValue, where Polly stops"
      : undefined,
  );
  retry.others(RETRY_PROPERTIES, standard ? "HttpRetryStrategyOptions" : "RetryStrategyOptions", recorder, RETRY_UNMODELED);
}

const BREAKER_PROPERTIES = ["FailureRatio", "MinimumThroughput", "SamplingDuration", "BreakDuration"];
const HALF_SECOND_TO_A_DAY = "00:00:00.5 to 1.00:00:00";

/** The standard handler's circuit breaker: always there, Polly's defaults for what the file omits. */
function readBreaker(breaker: Section, attemptTimeoutMs: number, recorder: PolicyRecorder): void {
  const value = (name: string) => breaker.get(name);
  const ratio = value("FailureRatio") === undefined ? 0.1 : ratioIn(value("FailureRatio")!, breaker.at("FailureRatio"));
  const throughput =
    value("MinimumThroughput") === undefined
      ? 100
      : integerIn(value("MinimumThroughput")!, breaker.at("MinimumThroughput"), 2, "calls in the sampling window, 2 or more");
  const span = (name: string, fallbackMs: number) =>
    value(name) === undefined ? fallbackMs : timeSpanIn(value(name)!, breaker.at(name), 500, DAY_MS, HALF_SECOND_TO_A_DAY);
  const samplingMs = span("SamplingDuration", 30_000);
  const breakMs = span("BreakDuration", 5_000);
  // HttpStandardResilienceOptionsCustomValidator refuses the options at start-up otherwise.
  if (samplingMs < 2 * attemptTimeoutMs)
    throw new ConfigFileError(
      `${breaker.at("SamplingDuration")}: ${formatTimeSpan(samplingMs)} is less than twice the attempt timeout (${formatTimeSpan(attemptTimeoutMs)}), ` +
        "which the standard handler's validation refuses; at least 2 x AttemptTimeout.Timeout",
    );
  recorder.field(
    breaker.at("FailureRatio"),
    breaker.shown("FailureRatio", "0.1"),
    { breaker: "sampling", "breaker-ratio": String(ratio) },
    BREAKER_DOCS,
  );
  recorder.field(
    breaker.at("MinimumThroughput"),
    breaker.shown("MinimumThroughput", "100"),
    { "breaker-min-throughput": String(throughput) },
    BREAKER_DOCS,
  );
  recorder.field(
    breaker.at("SamplingDuration"),
    breaker.shown("SamplingDuration", "00:00:30"),
    { "breaker-window": ms(samplingMs) },
    BREAKER_DOCS,
  );
  recorder.field(breaker.at("BreakDuration"), breaker.shown("BreakDuration", "00:00:05"), { "breaker-break": ms(breakMs) }, BREAKER_DOCS);
  breaker.others(BREAKER_PROPERTIES, "HttpCircuitBreakerStrategyOptions", recorder, RETRY_UNMODELED);
}

/** A timeout section's Timeout: Polly's range, the standard handler's default. */
function timeoutOf(section: Section, fallbackMs: number): number {
  const value = section.get("Timeout");
  return value === undefined ? fallbackMs : timeSpanIn(value, section.at("Timeout"), 10, DAY_MS, "00:00:00.010 to 1.00:00:00");
}

function readStandard(policy: Section, recorder: PolicyRecorder): void {
  const attempt = sectionOf(policy, "AttemptTimeout");
  const total = sectionOf(policy, "TotalRequestTimeout");
  const attemptMs = timeoutOf(attempt, 10_000);
  const totalMs = timeoutOf(total, 30_000);
  if (attemptMs > totalMs)
    throw new ConfigFileError(
      `${attempt.at("Timeout")}: ${formatTimeSpan(attemptMs)} is longer than TotalRequestTimeout (${formatTimeSpan(totalMs)}), which the standard handler's validation refuses`,
    );
  readRetry(sectionOf(policy, "Retry"), true, recorder);
  readBreaker(sectionOf(policy, "CircuitBreaker"), attemptMs, recorder);
  recorder.field(
    attempt.at("Timeout"),
    attempt.shown("Timeout", "00:00:10"),
    { timeout: ms(attemptMs) },
    `${TIMEOUT_DOCS}; ${STANDARD_DOCS}`,
  );
  attempt.others(["Timeout"], "HttpTimeoutStrategyOptions", recorder, RETRY_UNMODELED);
  for (const [key, value] of Object.entries(policy.raw)) {
    if (key.toLowerCase() === "totalrequesttimeout")
      recorder.notModelled(
        policy.at(key),
        value,
        "a deadline over all attempts and waits (30 s by default); our clients have a per-attempt timeout only",
      );
    if (key.toLowerCase() === "ratelimiter")
      recorder.notModelled(policy.at(key), value, "a concurrency limiter on the client (1000 permits by default); our clients have none");
  }
}

function interpret(root: Json, policyIndex: number): PolicyReading {
  const found = policies(root)[policyIndex];
  if (found === undefined) throw new Error(`unreachable: Polly file has no policy ${policyIndex}`);
  const policy = new Section(valueAt(root, found.path) as JsonObject, found.path);
  const recorder = new PolicyRecorder();
  if (found.standard) readStandard(policy, recorder);
  else readRetry(policy, false, recorder);
  const where = found.path.length === 0 ? "the file's root" : configKey(found.path);
  return recorder.reading(`${where} (${found.standard ? "HttpStandardResilienceOptions" : "RetryStrategyOptions"})`);
}

/** Polly's retry options that say a policy's waits (MaxDelay undefined: none), or why it has none. */
function retryWaitsFor(
  policy: BackoffPolicy,
): Partial<Record<"BackoffType" | "UseJitter" | "Delay" | "MaxDelay", Json | undefined>> | string {
  const form = exactWaitsOf(policy);
  const cap = (capMs: number) => (capMs >= TIMESPAN_MAX_MS ? undefined : formatTimeSpan(Math.min(capMs, DAY_MS)));
  const delay = (delayMs: number) => formatTimeSpan(Math.min(delayMs, DAY_MS));
  switch (form?.form) {
    case "fixed":
      return { BackoffType: "Constant", UseJitter: false, Delay: delay(form.delayMs), MaxDelay: undefined };
    case "geometric":
      if (form.multiplier === 2 && form.spread === 0)
        return { BackoffType: "Exponential", UseJitter: false, Delay: delay(form.initialMs), MaxDelay: cap(form.maxMs) };
      if (form.multiplier === 1 && Math.abs(form.spread - 0.25) < 1e-9)
        return { BackoffType: "Constant", UseJitter: true, Delay: delay(Math.min(form.initialMs, form.maxMs)), MaxDelay: undefined };
      return `Polly's waits are constant (±25 % with jitter), linear or doubling; a growth of ${form.multiplier} with a ±${form.spread} spread cannot be said`;
    case "aws":
      if (form.jitter !== "decorrelated") break;
      return { BackoffType: "Exponential", UseJitter: true, Delay: delay(form.baseMs), MaxDelay: cap(form.capMs) };
    case "listed": {
      const step = form.delaysMs[1] ?? 0;
      const last = form.delaysMs.at(-1)!;
      const linear = form.delaysMs[0] === 0 && form.delaysMs.every((wait, index) => Math.abs(wait - Math.min(index * step, last)) < 1e-6);
      if (linear && step > 0)
        return { BackoffType: "Linear", Delay: delay(step), MaxDelay: last < (form.delaysMs.length - 1) * step ? cap(last) : undefined };
      return "Polly has no table of waits; a Linear backoff says 0, d, 2d, ... only";
    }
  }
  return `Polly has no ${policy.kind} backoff: its waits are constant, linear or doubling`;
}

/** A value for a field, in the JSON type the file already uses for it (the binder reads both). */
function like(current: Json | undefined, value: Json | undefined): Json | undefined {
  if (value === undefined || current === undefined) return value;
  if (typeof current === "string" && typeof value !== "string") return String(value);
  return value;
}

function retryEdits(retry: Section, target: ResolvedTarget): Edit[] | string {
  if (target.maxAttempts === 1) return "Polly's MaxRetryAttempts is at least 1; a policy that never retries has no retry strategy";
  const waits = retryWaitsFor(target.policy);
  if (typeof waits === "string") return waits;
  const wanted: Record<string, Json | undefined> = {
    MaxRetryAttempts: target.maxAttempts === 0 ? INT_MAX : target.maxAttempts - 1,
    ...waits,
  };
  return Object.entries(wanted).map(([name, value]) => ({ path: retry.pathOf(name), value: like(retry.get(name), value) }));
}

function breakerEdits(breakerSection: Section, target: ResolvedTarget): Edit[] | string {
  const breaker = target.fleet.breaker;
  if (breaker === undefined)
    return "the standard resilience handler always has its circuit breaker (HttpStandardResilienceOptions.CircuitBreaker); without one, build your own pipeline";
  if (breaker.kind !== "sampling")
    return `Polly v8's circuit breaker trips on a failure ratio over a sampling window; it has no ${breaker.kind} breaker`;
  const wanted: Record<string, Json> = {
    FailureRatio: shortestNumber(breaker.failureRatio),
    MinimumThroughput: Math.max(2, breaker.minimumThroughput),
    SamplingDuration: formatTimeSpan(Math.min(DAY_MS, Math.max(500, breaker.samplingMs))),
    BreakDuration: formatTimeSpan(Math.min(DAY_MS, Math.max(500, breaker.breakMs))),
  };
  return Object.entries(wanted).map(([name, value]) => ({
    path: breakerSection.pathOf(name),
    value: like(breakerSection.get(name), value),
  }));
}

function edits(root: Json, policyIndex: number, target: ResolvedTarget): readonly Edit[] | string {
  const found = policies(root)[policyIndex]!;
  const unsupported = unsupportedMechanisms(
    target,
    found.standard ? "Polly's standard resilience handler" : "a RetryStrategyOptions section",
    found.standard,
  );
  if (unsupported !== undefined) return unsupported;
  const policy = new Section(valueAt(root, found.path) as JsonObject, found.path);
  if (!found.standard) {
    if (target.fleet.breaker !== undefined)
      return "a RetryStrategyOptions section has no circuit breaker; add a CircuitBreakerStrategyOptions to your pipeline";
    return retryEdits(policy, target);
  }
  const retry = retryEdits(sectionOf(policy, "Retry"), target);
  if (typeof retry === "string") return retry;
  const breaker = breakerEdits(sectionOf(policy, "CircuitBreaker"), target);
  if (typeof breaker === "string") return breaker;
  const attempt = sectionOf(policy, "AttemptTimeout");
  const timeout = formatTimeSpan(Math.min(DAY_MS, Math.max(10, target.timeoutMs)));
  return [...retry, ...breaker, { path: attempt.pathOf("Timeout"), value: like(attempt.get("Timeout"), timeout) }];
}

/** Polly's own spelling of a key, which recognizing asks for: reading matches any case, as the binder does. */
const SPELLED = new Set<string>([...SECTIONS, ...RETRY_KEYS]);

export const pollyFormat: ConfigFormat = jsonFormat({
  name: "polly",
  title: "Polly v8 options in appsettings.json (HttpStandardResilienceOptions or RetryStrategyOptions)",
  source: `${RETRY_DOCS}; ${STANDARD_DOCS}`,
  what: "an appsettings.json",
  // So that cockatiel's "retry" and "circuitBreaker" are not taken for a standard handler.
  recognizes: (root) =>
    findPolicies(root).some((found) => Object.keys(valueAt(root, found.path) as JsonObject).some((key) => SPELLED.has(key))),
  policyCount: (root) => policies(root).length,
  interpret,
  edits,
  system: "Polly",
  knobs: [
    "max-attempts",
    "min-delay",
    "max-delay",
    "timeout",
    "breaker-ratio",
    "breaker-min-throughput",
    "breaker-window",
    "breaker-break",
  ],
});

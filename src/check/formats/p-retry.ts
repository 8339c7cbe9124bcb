import type { JSONPath } from "jsonc-parser";
import type { BackoffPolicy } from "../../backoff/policy.ts";
import { exactWaitsOf } from "../../backoff/policies.ts";
import type { FlagSettings } from "../../recommend/settings.ts";
import { ConfigFileError, type ConfigFormat, type PolicyReading } from "../format.ts";
import {
  booleanAt,
  defaultText,
  type Edit,
  type Json,
  jsonFormat,
  type JsonObject,
  ms,
  NODE_TIMER_MAX_MS,
  namedOptions,
  numberAt,
  pathText,
  PolicyRecorder,
  type ResolvedTarget,
  shortestNumber,
  unsupportedMechanisms,
  valueAt,
  valueText,
} from "./json-options.ts";

/*
 * p-retry's options object as JSON: `{ "retries": 5, "factor": 2, "minTimeout": 500,
 * "maxTimeout": 30000, "randomize": true }`, or a map of names to such objects. p-retry 7.1.1
 * (index.js, calculateDelay) waits before retry n
 *   min(round(r x minTimeout x factor^(n-1)), maxTimeout),  r = 1, or U(1, 2) with randomize,
 * which is our `grpc` strategy, min(initial x multiplier^(n-1), max) x (1 ± jitter): exactly,
 * with jitter 0 (initial = minTimeout); and with randomize, initial 1.5 x minTimeout and jitter
 * 1/3 give 1.5 b x U(2/3, 4/3) = b x U(1, 2), the same draw, up to the cap, which p-retry applies
 * after its draw and our strategy before it.
 */

const README = 'p-retry 7 README, "Options", https://github.com/sindresorhus/p-retry#options';
const CODE =
  "p-retry 7.1.1 index.js, calculateDelay: min(round(random x minTimeout x factor^(attempt - 1)), maxTimeout), random 1 or " +
  "Math.random() + 1, https://github.com/sindresorhus/p-retry/blob/v7.1.1/index.js";

const DEFAULTS = { retries: 10, factor: 2, minTimeout: 1000, randomize: false } as const;

/** randomize's U(1, 2) as our grpc jitter: the middle 1.5 and a spread of a third either side. */
const RANDOMIZE_CENTRE = 1.5;
const RANDOMIZE_JITTER = 1 / 3;

const OPTION_NAMES = ["retries", "factor", "minTimeout", "maxTimeout", "randomize", "maxRetryTime", "unref", "forever"];
/** Options that hold functions or an AbortSignal: code, never in a JSON file. */
const CODE_OPTIONS = ["onFailedAttempt", "shouldRetry", "shouldConsumeRetry", "signal"];

const isPRetryOptions = (value: JsonObject): boolean =>
  Object.keys(value).every((key) => OPTION_NAMES.includes(key) || CODE_OPTIONS.includes(key)) &&
  (Object.keys(value).length === 0 || Object.keys(value).some((key) => OPTION_NAMES.includes(key)));

function policyPaths(root: Json): JSONPath[] {
  const found = namedOptions(root, isPRetryOptions);
  if (found === undefined)
    throw new ConfigFileError(
      `not p-retry options: expected an object of ${OPTION_NAMES.slice(0, 5).join(", ")} (or a map of names to such objects)`,
    );
  return found.map((entry) => entry.path);
}

/** The options as p-retry fills them in, each checked as p-retry checks it. */
interface Options {
  readonly retries: number;
  readonly factor: number;
  readonly minTimeout: number;
  /** Infinity when absent. */
  readonly maxTimeout: number;
  readonly randomize: boolean;
}

function optionsOf(options: JsonObject, at: (key: string) => string): Options {
  const get = (key: string): Json | undefined => (Object.hasOwn(options, key) ? options[key] : undefined);
  if (get("forever") !== undefined)
    throw new ConfigFileError(`${at("forever")}: p-retry 7 throws "The \`forever\` option is no longer supported"; use a large retries`);
  const retries = get("retries");
  const factor = get("factor");
  const minTimeout = get("minTimeout");
  const maxTimeout = get("maxTimeout");
  const randomize = get("randomize");
  let factorValue =
    factor === undefined
      ? DEFAULTS.factor
      : numberAt(factor, at("factor"), { min: 0, allowed: "a number, 1 or more (2 doubles each wait)" });
  // p-retry treats a factor of 0 as 1 (index.js: "Treat non-positive factor as 1").
  if (factorValue === 0) factorValue = 1;
  if (factorValue < 1)
    throw new ConfigFileError(
      `${at("factor")}: ${factorValue} makes each wait shorter than the last, which our model cannot simulate; 1 or more`,
    );
  return {
    retries:
      retries === undefined
        ? DEFAULTS.retries
        : numberAt(retries, at("retries"), { min: 0, integer: true, allowed: "a whole number of retries, 0 or more" }),
    factor: factorValue,
    minTimeout:
      minTimeout === undefined
        ? DEFAULTS.minTimeout
        : numberAt(minTimeout, at("minTimeout"), { min: 0, allowed: "milliseconds, 0 or more" }),
    maxTimeout:
      maxTimeout === undefined ? Infinity : numberAt(maxTimeout, at("maxTimeout"), { min: 0, allowed: "milliseconds, 0 or more" }),
    randomize: randomize === undefined ? DEFAULTS.randomize : booleanAt(randomize, at("randomize")),
  };
}

/** Our settings for p-retry's waits, by the field that sets them, and where our strategy differs. */
interface WaitSettings {
  readonly randomize: FlagSettings;
  readonly minTimeout: FlagSettings;
  readonly maxTimeout: FlagSettings;
  readonly factor: FlagSettings;
  readonly approximation?: string;
}

function waitSettings(options: Options): WaitSettings {
  const cap = Math.min(options.maxTimeout, NODE_TIMER_MAX_MS);
  // Every wait is the cap, drawn or not.
  if (options.minTimeout >= cap)
    return { randomize: { strategy: "fixed" }, minTimeout: {}, maxTimeout: { "simple-backoff-delay": ms(cap) }, factor: {} };
  const first = options.randomize ? RANDOMIZE_CENTRE * options.minTimeout : options.minTimeout;
  return {
    randomize: { strategy: "grpc", jitter: options.randomize ? String(RANDOMIZE_JITTER) : "0" },
    minTimeout: { "min-delay": ms(Math.min(first, cap)) },
    maxTimeout: { "max-delay": ms(cap) },
    factor: { "backoff-factor": String(options.factor) },
    ...(options.randomize
      ? {
          approximation:
            "randomize multiplies by U(1, 2) before the cap, so p-retry's capped waits are maxTimeout exactly; our grpc strategy caps " +
            "before its ±1/3 spread, so its capped waits are U(2/3, 4/3) x maxTimeout, the same on average" +
            (first > cap ? "; with 1.5 x minTimeout above the cap, the first waits are capped sooner" : ""),
        }
      : {}),
  };
}

function interpret(root: Json, policyIndex: number): PolicyReading {
  const path = policyPaths(root)[policyIndex];
  if (path === undefined) throw new Error(`unreachable: p-retry file has no policy ${policyIndex}`);
  const raw = valueAt(root, path) as JsonObject;
  const at = (key: string) => pathText([...path, key]);
  const options = optionsOf(raw, at);
  const recorder = new PolicyRecorder();
  const present = (key: string): Json | undefined => (Object.hasOwn(raw, key) ? raw[key] : undefined);
  const shown = (key: string, fallback: string) => {
    const value = present(key);
    return value === undefined ? defaultText(fallback) : valueText(value);
  };
  const waits = waitSettings(options);
  recorder.field(at("retries"), shown("retries", "10"), { "max-attempts": String(options.retries + 1) }, README);
  recorder.field(at("randomize"), shown("randomize", "false"), waits.randomize, CODE, options.randomize ? waits.approximation : undefined);
  recorder.field(at("minTimeout"), shown("minTimeout", "1000"), waits.minTimeout, README);
  recorder.field(
    at("maxTimeout"),
    shown("maxTimeout", "Infinity"),
    waits.maxTimeout,
    README,
    options.maxTimeout > NODE_TIMER_MAX_MS
      ? `no cap: read as Node's longest timer, ${ms(NODE_TIMER_MAX_MS)} (a longer setTimeout fires after 1 ms, with a TimeoutOverflowWarning)`
      : undefined,
  );
  recorder.field(at("factor"), shown("factor", "2"), waits.factor, README);
  for (const [key, value] of Object.entries(raw)) {
    if (key === "maxRetryTime")
      recorder.notModelled(at(key), value, "a deadline over all attempts and waits; our clients have a per-attempt timeout only");
    else if (key === "unref")
      recorder.notModelled(at(key), value, "whether a pending wait keeps Node's event loop alive; no effect on the waits");
    else if (CODE_OPTIONS.includes(key))
      recorder.notModelled(at(key), value, "a function or AbortSignal in code; every failure is retried in our model");
  }
  return recorder.reading(policyNames(root)[policyIndex]!);
}

const policyNames = (root: Json): string[] =>
  policyPaths(root).map((path) => (path.length === 0 ? "the file's options" : `options "${String(path[0])}"`));

/** The p-retry options that say a policy, or why it has none. */
function optionsFor(policy: BackoffPolicy): Omit<Options, "retries"> | string {
  const form = exactWaitsOf(policy);
  if (form?.form === "fixed") return { factor: 1, minTimeout: form.delayMs, randomize: false, maxTimeout: Infinity };
  if (form?.form === "geometric") {
    const capped = form.maxMs >= NODE_TIMER_MAX_MS ? Infinity : form.maxMs;
    if (form.spread === 0) return { factor: form.multiplier, minTimeout: form.initialMs, randomize: false, maxTimeout: capped };
    if (Math.abs(form.spread - RANDOMIZE_JITTER) < 1e-9)
      return { factor: form.multiplier, minTimeout: form.initialMs / RANDOMIZE_CENTRE, randomize: true, maxTimeout: capped };
    return `p-retry's only jitter is randomize, x U(1, 2) (±1/3 about the middle); a ±${form.spread} spread cannot be said`;
  }
  return `p-retry waits minTimeout x factor^(n-1), optionally x U(1, 2); it has no ${policy.kind} backoff`;
}

function edits(root: Json, policyIndex: number, target: ResolvedTarget): readonly Edit[] | string {
  const unsupported = unsupportedMechanisms(target, "p-retry");
  if (unsupported !== undefined) return unsupported;
  if (target.fleet.breaker !== undefined) return "p-retry has no circuit breaker";
  if (target.maxAttempts === 0) return "a JSON file cannot say p-retry's retries: Infinity (no limit)";
  const wanted = optionsFor(target.policy);
  if (typeof wanted === "string") return wanted;
  const path = policyPaths(root)[policyIndex]!;
  return [
    { path: [...path, "retries"], value: target.maxAttempts - 1 },
    { path: [...path, "factor"], value: shortestNumber(wanted.factor) },
    { path: [...path, "minTimeout"], value: shortestNumber(wanted.minTimeout) },
    // p-retry's default maxTimeout is Infinity, which JSON cannot write: no cap is no field.
    { path: [...path, "maxTimeout"], value: wanted.maxTimeout === Infinity ? undefined : shortestNumber(wanted.maxTimeout) },
    { path: [...path, "randomize"], value: wanted.randomize },
  ];
}

export const pRetryFormat: ConfigFormat = jsonFormat({
  name: "p-retry",
  title: "p-retry options (JSON)",
  source: README,
  what: "p-retry options",
  recognizes: (root) => namedOptions(root, isPRetryOptions) !== undefined,
  policyCount: (root) => policyPaths(root).length,
  interpret,
  edits,
  system: "p-retry",
  knobs: ["max-attempts", "min-delay", "max-delay", "backoff-factor"],
});

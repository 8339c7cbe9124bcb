import type { JSONPath } from "jsonc-parser";
import type { BackoffPolicy } from "../../backoff/policy.ts";
import { exactWaitsOf } from "../../backoff/policies.ts";
import type { AwsJitter } from "../../backoff/policies/exact-waits.ts";
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
  namedOptions,
  numberAt,
  objectAt,
  pathText,
  PolicyRecorder,
  type ResolvedTarget,
  shortestNumber,
  unsupportedMechanisms,
  valueAt,
  valueText,
} from "./json-options.ts";

/*
 * cockatiel's retry and circuit breaker as JSON. A backoff is a class instance in code, so this
 * form mirrors the constructors' arguments one to one:
 *
 *   {
 *     "retry": {                                   // retry(handleAll, { maxAttempts, backoff })
 *       "maxAttempts": 5,                          // retries after the first call; absent: Infinity
 *       "backoff": { "type": "exponential",        // new ExponentialBackoff({ ... }), every field optional
 *                    "initialDelay": 128, "maxDelay": 30000, "exponent": 2,
 *                    "generator": "decorrelatedJitter" }     // or noJitter, fullJitter, halfJitter
 *                | { "type": "constant", "interval": 500 }   // new ConstantBackoff(500); absent: ConstantBackoff(0)
 *     },
 *     "circuitBreaker": {                          // circuitBreaker(handleAll, { halfOpenAfter, breaker })
 *       "halfOpenAfter": 10000,
 *       "breaker": { "type": "consecutive", "threshold": 5 }             // new ConsecutiveBreaker(5)
 *                | { "type": "sampling", "threshold": 0.2, "duration": 30000, "minimumRps": 5 }  // new SamplingBreaker({ ... })
 *                | { "type": "count", "threshold": 0.2, "size": 100 }     // new CountBreaker({ ... }): not modelled
 *     }
 *   }
 *
 * or a map of names to such objects. What each generator waits, from cockatiel 3.2.1's
 * ExponentialBackoffGenerators.js (n the retry, from 1): noJitter min(maxDelay, initialDelay x
 * 2^(n-1)); fullJitter floor(U x that); halfJitter floor((that + U x that) / 2); all three double
 * whatever the exponent, which only decorrelatedJitter reads.
 */

const README = "cockatiel 3 README";
const RETRY_SOURCE = `${README}, "retry(policy, options)", https://github.com/connor4312/cockatiel#retrypolicy-options`;
const EXPONENTIAL_SOURCE = `${README}, "ExponentialBackoff", https://github.com/connor4312/cockatiel#exponentialbackoff`;
const CONSTANT_SOURCE = `${README}, "ConstantBackoff", https://github.com/connor4312/cockatiel#constantbackoff`;
const BREAKER_SOURCE = `${README}, "circuitBreaker(policy, { halfOpenAfter, breaker[, initialState] })", https://github.com/connor4312/cockatiel#breakers`;
const GENERATORS_SOURCE =
  "cockatiel 3.2.1 ExponentialBackoffGenerators.js, https://github.com/connor4312/cockatiel/blob/v3.2.1/src/backoff/ExponentialBackoffGenerators.ts";

const EXPONENTIAL_DEFAULTS = { initialDelay: 128, maxDelay: 30_000, exponent: 2, generator: "decorrelatedJitter" } as const;
const GENERATORS = ["noJitter", "fullJitter", "halfJitter", "decorrelatedJitter"] as const;
/** cockatiel's generator for each of AWS's jitters. */
const AWS_GENERATORS: Readonly<Record<AwsJitter, Generator>> = {
  full: "fullJitter",
  equal: "halfJitter",
  decorrelated: "decorrelatedJitter",
};
type Generator = (typeof GENERATORS)[number];
/** SamplingBreaker's default minimumRps: "you need 5 failures per second for the breaker to kick in". */
const FAILURES_PER_SECOND = 5;

const POLICY_KEYS = ["retry", "circuitBreaker"];
const isCockatielPolicy = (value: JsonObject): boolean =>
  Object.keys(value).length > 0 && Object.keys(value).every((key) => POLICY_KEYS.includes(key));

function policyPaths(root: Json): JSONPath[] {
  const found = namedOptions(root, isCockatielPolicy);
  if (found === undefined)
    throw new ConfigFileError(
      'not a cockatiel policy: expected an object of "retry" and "circuitBreaker" (or a map of names to such objects)',
    );
  return found.map((entry) => entry.path);
}

/** One object of the file and how to name its members. */
interface Section {
  readonly raw: JsonObject;
  readonly path: JSONPath;
  readonly at: (key: string) => string;
  readonly get: (key: string) => Json | undefined;
}

function section(raw: JsonObject, path: JSONPath): Section {
  return {
    raw,
    path,
    at: (key) => pathText([...path, key]),
    get: (key) => (Object.hasOwn(raw, key) ? raw[key] : undefined),
  };
}

/** Members of a section this form does not have: named, with what cockatiel would make of them. */
function unknownMembers(part: Section, known: readonly string[], what: string, recorder: PolicyRecorder): void {
  for (const [key, value] of Object.entries(part.raw))
    if (!known.includes(key)) recorder.notModelled(part.at(key), value, `not an option of ${what}; cockatiel ignores it`);
}

const shown = (part: Section, key: string, fallback: string) => {
  const value = part.get(key);
  return value === undefined ? defaultText(fallback) : valueText(value);
};

function generatorOf(part: Section): Generator {
  const raw = part.get("generator");
  if (raw === undefined) return EXPONENTIAL_DEFAULTS.generator;
  const name = typeof raw === "string" ? raw.replace(/Generator$/, "") : "";
  if (!(GENERATORS as readonly string[]).includes(name))
    throw new ConfigFileError(`${part.at("generator")}: ${JSON.stringify(raw)} is not a generator, one of ${GENERATORS.join(", ")}`);
  return name as Generator;
}

/** Our settings for an ExponentialBackoff, and where our strategy differs from its generator. */
function exponentialSettings(
  generator: Generator,
  initialMs: number,
  capMs: number,
  exponent: number,
  retries: number,
): { settings: FlagSettings; approximation?: string } {
  const floors = "cockatiel floors each wait to a whole millisecond";
  const first = Math.min(initialMs, capMs);
  switch (generator) {
    case "noJitter":
      return initialMs >= capMs
        ? { settings: { strategy: "fixed", "simple-backoff-delay": ms(capMs) } }
        : { settings: { strategy: "grpc", "min-delay": ms(initialMs), "max-delay": ms(capMs), "backoff-factor": "2", jitter: "0" } };
    case "fullJitter":
      // A first wait at the cap is U(0, cap) every time: our grpc strategy's 1 ± 1 spread about half of it.
      return initialMs >= capMs
        ? {
            settings: { strategy: "grpc", "min-delay": ms(first / 2), "max-delay": ms(first / 2), "backoff-factor": "1", jitter: "1" },
            approximation: floors,
          }
        : { settings: { strategy: "full-jitter", "min-delay": ms(initialMs), "max-delay": ms(capMs) }, approximation: floors };
    case "halfJitter":
      return initialMs >= capMs
        ? {
            settings: {
              strategy: "grpc",
              "min-delay": ms(0.75 * first),
              "max-delay": ms(0.75 * first),
              "backoff-factor": "1",
              jitter: String(1 / 3),
            },
            approximation: floors,
          }
        : { settings: { strategy: "equal-jitter", "min-delay": ms(initialMs), "max-delay": ms(capMs) }, approximation: floors };
    case "decorrelatedJitter":
      if (initialMs === 0) return { settings: { strategy: "fixed", "simple-backoff-delay": "0s" } };
      return {
        settings: { strategy: "decorrelated-jitter", "min-delay": ms(first), "max-delay": ms(capMs) },
        approximation: decorrelatedNote("cockatiel's decorrelatedJitter", exponent, initialMs, retries),
      };
  }
}

function readExponential(backoff: Section, retries: number, recorder: PolicyRecorder): void {
  const delayOf = (key: "initialDelay" | "maxDelay") => {
    const raw = backoff.get(key);
    return raw === undefined ? EXPONENTIAL_DEFAULTS[key] : numberAt(raw, backoff.at(key), { min: 0, allowed: "milliseconds, 0 or more" });
  };
  const initialMs = delayOf("initialDelay");
  const capMs = delayOf("maxDelay");
  const rawExponent = backoff.get("exponent");
  const exponent =
    rawExponent === undefined
      ? EXPONENTIAL_DEFAULTS.exponent
      : numberAt(rawExponent, backoff.at("exponent"), { above: 1, allowed: "a number above 1" });
  const generator = generatorOf(backoff);
  const { settings, approximation } = exponentialSettings(generator, initialMs, capMs, exponent, retries);
  // The delays set our first wait and cap; the generator the strategy and the rest.
  const { "min-delay": minDelay, "simple-backoff-delay": delay, "max-delay": maxDelay, ...rest } = settings;
  const defined = (values: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
  recorder.field(backoff.at("generator"), shown(backoff, "generator", "decorrelatedJitter"), rest, GENERATORS_SOURCE, approximation);
  recorder.field(
    backoff.at("initialDelay"),
    shown(backoff, "initialDelay", "128"),
    defined({ "min-delay": minDelay, "simple-backoff-delay": delay }),
    EXPONENTIAL_SOURCE,
  );
  recorder.field(backoff.at("maxDelay"), shown(backoff, "maxDelay", "30000"), defined({ "max-delay": maxDelay }), EXPONENTIAL_SOURCE);
  if (generator === "decorrelatedJitter") recorder.field(backoff.at("exponent"), shown(backoff, "exponent", "2"), {}, EXPONENTIAL_SOURCE);
  else if (rawExponent !== undefined)
    recorder.notModelled(
      backoff.at("exponent"),
      rawExponent,
      `cockatiel's ${generator} generator ignores it: it doubles (initialDelay * 2 ** attempt)`,
    );
  unknownMembers(backoff, ["type", "initialDelay", "maxDelay", "exponent", "generator"], "ExponentialBackoff", recorder);
}

function readBackoff(retry: Section, retries: number, recorder: PolicyRecorder): void {
  const raw = retry.get("backoff");
  if (raw === undefined) {
    recorder.field(
      retry.at("backoff"),
      defaultText("ConstantBackoff(0)"),
      { strategy: "fixed", "simple-backoff-delay": "0s" },
      RETRY_SOURCE,
    );
    return;
  }
  const backoff = section(objectAt(raw, retry.at("backoff"), 'an object with "type": "exponential" or "constant"'), [
    ...retry.path,
    "backoff",
  ]);
  const type = backoff.get("type");
  if (type === "exponential") return readExponential(backoff, retries, recorder);
  if (type !== "constant")
    throw new ConfigFileError(
      `${backoff.at("type")}: ${JSON.stringify(type ?? null)} is not a backoff of this form, "exponential" or "constant" (IterableBackoff and DelegateBackoff are code)`,
    );
  const interval = backoff.get("interval");
  if (interval === undefined) throw new ConfigFileError(`${backoff.at("interval")}: missing, ConstantBackoff's interval in milliseconds`);
  const delay = numberAt(interval, backoff.at("interval"), { min: 0, allowed: "milliseconds, 0 or more" });
  recorder.field(backoff.at("interval"), valueText(interval), { strategy: "fixed", "simple-backoff-delay": ms(delay) }, CONSTANT_SOURCE);
  unknownMembers(backoff, ["type", "interval"], "ConstantBackoff", recorder);
}

/** retry()'s options: the attempts and the backoff. */
function readRetry(raw: Json | undefined, path: JSONPath, recorder: PolicyRecorder): void {
  const retry = section(
    raw === undefined ? {} : objectAt(raw, pathText(path), "retry(handleAll, { maxAttempts, backoff })'s options"),
    path,
  );
  const attempts = retry.get("maxAttempts");
  const retries =
    attempts === undefined
      ? Infinity
      : numberAt(attempts, retry.at("maxAttempts"), { min: 0, integer: true, allowed: "a whole number of retries, 0 or more" });
  recorder.field(
    retry.at("maxAttempts"),
    shown(retry, "maxAttempts", "Infinity"),
    { "max-attempts": retries === Infinity ? "0" : String(retries + 1) },
    `${RETRY_SOURCE}; RetryPolicy.js retries while retries < maxAttempts, so it counts retries after the first call ("retry three times")`,
  );
  readBackoff(retry, retries, recorder);
  unknownMembers(retry, ["maxAttempts", "backoff"], "retry()", recorder);
}

function readSampling(breaker: Section): FlagSettings {
  const threshold = numberAt(breaker.get("threshold"), breaker.at("threshold"), {
    above: 0,
    below: 1,
    allowed: "the failure ratio that opens it, between 0 and 1 (SamplingBreaker throws outside)",
  });
  const duration = numberAt(breaker.get("duration"), breaker.at("duration"), {
    above: 0,
    allowed: "the sampling window in milliseconds, above 0",
  });
  const rps = breaker.get("minimumRps");
  const minimumRps =
    rps === undefined
      ? FAILURES_PER_SECOND / threshold
      : numberAt(rps, breaker.at("minimumRps"), { above: 0, allowed: "calls a second, above 0" });
  return {
    breaker: "sampling",
    "breaker-ratio": String(threshold),
    "breaker-window": ms(duration),
    "breaker-min-throughput": String(minimumThroughput(duration, minimumRps)),
  };
}

/** SamplingBreaker opens only with at least duration x minimumRps calls in its window (SamplingBreaker.js). */
const minimumThroughput = (durationMs: number, minimumRps: number) => Math.max(1, Math.ceil((durationMs / 1000) * minimumRps - 1e-9));

const SAMPLING_APPROXIMATION =
  "cockatiel opens when failures exceed the threshold (>) over max(5, duration in seconds) windows; ours at the ratio (>=), over 10 windows, as Polly";

function readBreaker(raw: Json | undefined, path: JSONPath, recorder: PolicyRecorder): void {
  if (raw === undefined) return;
  const breakerPolicy = section(objectAt(raw, pathText(path), "circuitBreaker(handleAll, { halfOpenAfter, breaker })'s options"), path);
  const half = breakerPolicy.get("halfOpenAfter");
  if (half === undefined)
    throw new ConfigFileError(`${breakerPolicy.at("halfOpenAfter")}: missing, milliseconds before a probe (cockatiel requires it)`);
  const breakMs = numberAt(half, breakerPolicy.at("halfOpenAfter"), { min: 0, allowed: "milliseconds, 0 or more" });
  const breaker = section(
    objectAt(breakerPolicy.get("breaker"), breakerPolicy.at("breaker"), 'an object with "type": "consecutive" or "sampling"'),
    [...path, "breaker"],
  );
  const type = breaker.get("type");
  if (type === "count") {
    recorder.notModelled(
      breakerPolicy.at("breaker"),
      breaker.raw,
      "a CountBreaker (the last `size` calls) has no counterpart in our model, which has consecutive and time-window breakers; simulated without a breaker",
    );
    return;
  }
  if (type !== "consecutive" && type !== "sampling")
    throw new ConfigFileError(
      `${breaker.at("type")}: ${JSON.stringify(type ?? null)} is not a breaker of this form, "consecutive", "sampling" or "count"`,
    );
  recorder.field(breakerPolicy.at("halfOpenAfter"), valueText(half), { "breaker-break": ms(breakMs) }, BREAKER_SOURCE);
  if (type === "consecutive") {
    const threshold = numberAt(breaker.get("threshold"), breaker.at("threshold"), {
      min: 1,
      integer: true,
      allowed: "failures in a row, 1 or more",
    });
    recorder.field(
      breaker.at("threshold"),
      String(threshold),
      { breaker: "consecutive", "breaker-failures": String(threshold) },
      BREAKER_SOURCE,
    );
    unknownMembers(breaker, ["type", "threshold"], "ConsecutiveBreaker", recorder);
  } else {
    const settings = readSampling(breaker);
    recorder.field(
      breaker.at("threshold"),
      valueText(breaker.raw.threshold!),
      { breaker: "sampling", "breaker-ratio": settings["breaker-ratio"]! },
      BREAKER_SOURCE,
      SAMPLING_APPROXIMATION,
    );
    recorder.field(
      breaker.at("duration"),
      valueText(breaker.raw.duration!),
      { "breaker-window": settings["breaker-window"]! },
      BREAKER_SOURCE,
    );
    recorder.field(
      breaker.at("minimumRps"),
      shown(breaker, "minimumRps", `5 / threshold = ${FAILURES_PER_SECOND / Number(settings["breaker-ratio"])}`),
      { "breaker-min-throughput": settings["breaker-min-throughput"]! },
      BREAKER_SOURCE,
      "cockatiel asks for minimumRps calls a second over the window; ours for their count, duration x minimumRps",
    );
    unknownMembers(breaker, ["type", "threshold", "duration", "minimumRps"], "SamplingBreaker", recorder);
  }
  unknownMembers(breakerPolicy, ["halfOpenAfter", "breaker"], "circuitBreaker()", recorder);
}

function interpret(root: Json, policyIndex: number): PolicyReading {
  const path = policyPaths(root)[policyIndex];
  if (path === undefined) throw new Error(`unreachable: cockatiel file has no policy ${policyIndex}`);
  const policy = valueAt(root, path) as JsonObject;
  const recorder = new PolicyRecorder();
  readRetry(policy.retry, [...path, "retry"], recorder);
  readBreaker(policy.circuitBreaker, [...path, "circuitBreaker"], recorder);
  return recorder.reading(path.length === 0 ? "the file's policy" : `policy "${String(path[0])}"`);
}

/** The file's generator name as it writes them (`fullJitter` or `fullJitterGenerator`), for a new value. */
function generatorName(current: Json | undefined, generator: Generator): string {
  return typeof current === "string" && current.endsWith("Generator") ? `${generator}Generator` : generator;
}

/** The backoff object that says a policy, or why cockatiel cannot. */
function backoffFor(policy: BackoffPolicy): JsonObject | string {
  const form = exactWaitsOf(policy);
  const exponential = (generator: Generator, initialMs: number, capMs: number): JsonObject => ({
    type: "exponential",
    initialDelay: shortestNumber(initialMs),
    maxDelay: shortestNumber(capMs),
    generator,
  });
  switch (form?.form) {
    case "fixed":
      return { type: "constant", interval: shortestNumber(form.delayMs) };
    case "geometric":
      if (form.spread === 0 && form.multiplier === 2) return exponential("noJitter", form.initialMs, form.maxMs);
      return (
        "cockatiel's exponential backoffs double each wait, with no jitter, full, half or decorrelated jitter; " +
        `a factor of ${form.multiplier} with a ±${form.spread} spread cannot be said`
      );
    case "aws":
      return exponential(AWS_GENERATORS[form.jitter], form.baseMs, form.capMs);
    default:
      return `cockatiel has no ${policy.kind} backoff in this form (a DelegateBackoff in code could compute it)`;
  }
}

/** Edits that make an object say `wanted`: its members one by one where it is of the same type, else the whole object. */
function objectEdits(
  current: Json | undefined,
  path: JSONPath,
  wanted: JsonObject,
  keep: (key: string) => Json | undefined = () => undefined,
): Edit[] {
  if (!isObject(current) || current.type !== wanted.type) return [{ path, value: wanted }];
  return Object.entries(wanted)
    .filter(([key]) => key !== "type")
    .map(([key, value]) => ({ path: [...path, key], value: keep(key) ?? value }));
}

function breakerEdits(policy: JsonObject, path: JSONPath, target: ResolvedTarget): Edit[] | string {
  const breaker = target.fleet.breaker;
  const at = [...path, "circuitBreaker"];
  if (breaker === undefined) return [{ path: at, value: undefined }];
  let wanted: JsonObject;
  if (breaker.kind === "consecutive") wanted = { type: "consecutive", threshold: breaker.failureThreshold };
  else if (breaker.kind === "sampling") {
    if (breaker.failureRatio >= 1) return "cockatiel's SamplingBreaker needs a threshold below 1";
    const seconds = breaker.samplingMs / 1000;
    const minimumRps = shortestNumber(
      breaker.minimumThroughput / seconds,
      (rps) => minimumThroughput(breaker.samplingMs, rps) === breaker.minimumThroughput,
    );
    wanted = {
      type: "sampling",
      threshold: shortestNumber(breaker.failureRatio),
      duration: shortestNumber(breaker.samplingMs),
      minimumRps,
    };
  } else return `cockatiel's breakers stop every call; it has no ${breaker.kind} breaker, which stops only retries`;
  const current = policy.circuitBreaker;
  const halfOpenAfter = shortestNumber(breaker.breakMs);
  if (!isObject(current)) return [{ path: at, value: { halfOpenAfter, breaker: wanted } }];
  return [{ path: [...at, "halfOpenAfter"], value: halfOpenAfter }, ...objectEdits(current.breaker, [...at, "breaker"], wanted)];
}

function edits(root: Json, policyIndex: number, target: ResolvedTarget): readonly Edit[] | string {
  const unsupported = unsupportedMechanisms(target, "cockatiel's retry and circuit breaker");
  if (unsupported !== undefined) return unsupported;
  const path = policyPaths(root)[policyIndex]!;
  const policy = valueAt(root, path) as JsonObject;
  const backoff = backoffFor(target.policy);
  if (typeof backoff === "string") return backoff;
  const breakers = breakerEdits(policy, path, target);
  if (typeof breakers === "string") return breakers;
  const retry = isObject(policy.retry) ? policy.retry : {};
  const currentBackoff = retry.backoff;
  const backoffs = objectEdits(currentBackoff, [...path, "retry", "backoff"], backoff, (key) =>
    key === "generator" && isObject(currentBackoff) ? generatorName(currentBackoff.generator, backoff.generator as Generator) : undefined,
  );
  // Absent maxAttempts is Infinity, which JSON cannot write.
  const maxAttempts = target.maxAttempts === 0 ? undefined : target.maxAttempts - 1;
  return [{ path: [...path, "retry", "maxAttempts"], value: maxAttempts }, ...backoffs, ...breakers];
}

export const cockatielFormat: ConfigFormat = jsonFormat({
  name: "cockatiel",
  title: "cockatiel retry and circuit breaker (JSON of their constructor arguments)",
  source: `${README}, https://github.com/connor4312/cockatiel#readme`,
  what: "a cockatiel policy",
  recognizes: (root) => namedOptions(root, isCockatielPolicy) !== undefined,
  policyCount: (root) => policyPaths(root).length,
  interpret,
  edits,
  system: "cockatiel",
  knobs: [
    "max-attempts",
    "min-delay",
    "max-delay",
    "breaker",
    "breaker-failures",
    "breaker-ratio",
    "breaker-min-throughput",
    "breaker-window",
    "breaker-break",
  ],
});

import { applyEdits, type FormattingOptions, getLocation, modify, parse, type ParseError, printParseErrorCode } from "jsonc-parser";
import type { FlagSettings } from "../../recommend/settings.ts";
import { GRPC_MAX_ATTEMPTS } from "../../recommend/snippets.ts";
import { type CheckFlag, type ConfigFormat, ConfigFileError, type ConfigReading, type PolicyReading, type Written } from "../format.ts";
import {
  defaulted,
  effective,
  integerAt,
  isObject,
  type JsonObject,
  listAt,
  ms,
  numberAt,
  objectAt,
  PolicyBuilder,
  protoDurationAt,
  protoDurationFor,
  sameFlag,
  unsayable,
} from "./envoy-shared.ts";

/*
 * gRPC's service config (JSON): each methodConfig entry is one policy, its retryPolicy or
 * hedgingPolicy read into our grpc strategy (A6 since its 2024 revision: min(initialBackoff x
 * backoffMultiplier^(n-1), maxBackoff) x U(0.8, 1.2), our grpc strategy with jitter 0.2) or our
 * hedging; the channel's retryThrottling is our grpc budget.
 */

const A6 = 'gRPC A6 "gRPC Retry Design", https://github.com/grpc/proposal/blob/master/A6-client-retries.md';
const SERVICE_CONFIG =
  'gRPC "Service Config via DNS" and grpc/service_config/service_config.proto, https://github.com/grpc/grpc-proto/blob/master/grpc/service_config/service_config.proto';
const GRPC_JITTER = "0.2";

const BACKOFF_APPROXIMATION =
  "A6 before its 2024 revision (and the gRPC implementations that predate it) drew U(0, that backoff) instead of x U(0.8, 1.2): " +
  "the same mean only with no jitter counted, and no minimum wait; grpc-js 1.14, grpc-go and grpc-java follow the revision";
const THROTTLING_SCOPE =
  "retryThrottling is one token bucket per channel, shared by every method; our grpc budget is one per client instance (-instances)";

const METHOD_FIELDS: Readonly<Record<string, string>> = {
  waitForReady: "waits for a connection instead of failing at once; our model's server is always reachable",
  timeout:
    "a deadline over all attempts together (A6); gRPC has no per-attempt timeout, our model has one: the scenario's -timeout applies",
  maxRequestBytes: "a message size limit; not modelled",
  maxResponseBytes: "a message size limit; not modelled",
};

const TOP_FIELDS: Readonly<Record<string, string>> = {
  loadBalancingConfig: "how calls are spread over servers; our model has one server",
  loadBalancingPolicy: "how calls are spread over servers; our model has one server",
  healthCheckConfig: "client-side health checking; our model has one server",
};

interface ServiceConfig {
  readonly root: JsonObject;
  readonly methods: readonly JsonObject[];
  /** The file's own spelling of each field it spells otherwise than A6, by the field's path as A6 spells it. */
  readonly spellings: ReadonlyMap<string, string>;
}

/*
 * grpc-go reads a service config with encoding/json into structs without JSON tags, so a field
 * name matches whatever its case: grpc-go's own retry example writes "MaxAttempts". grpc-js and
 * grpc-java look the camelCase names up and reject such a config. We read it as grpc-go does, say
 * so on each such field, and write back into the file's own spelling.
 */
const FIELDS_OF = {
  root: ["methodConfig", "retryThrottling", ...Object.keys(TOP_FIELDS)],
  method: ["name", "retryPolicy", "hedgingPolicy", ...Object.keys(METHOD_FIELDS)],
  name: ["service", "method"],
  retryPolicy: ["maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"],
  hedgingPolicy: ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"],
  retryThrottling: ["maxTokens", "tokenRatio"],
} as const;

const GO_SOURCE = "grpc-go service_config.go (jsonSC, jsonMC, jsonRetryPolicy: fields without JSON tags)";

/**
 * `object` with each key that matches one of `fields` but for its case renamed to it (unless the
 * file also has it as spelled), the renames kept.
 */
function asA6Spells(object: unknown, fields: readonly string[], at: string, spellings: Map<string, string>): unknown {
  if (!isObject(object)) return object;
  return Object.fromEntries(
    Object.entries(object).map(([key, value]) => {
      const field = fields.find((name) => name.toLowerCase() === key.toLowerCase());
      if (field === undefined || field === key || field in object) return [key, value];
      spellings.set(`${at}${at === "" ? "" : "."}${field}`, key);
      return [field, value];
    }),
  );
}

/** The config's objects with their keys as A6 spells them. */
function respelled(root: unknown, spellings: Map<string, string>): unknown {
  const config = asA6Spells(root, FIELDS_OF.root, "", spellings);
  if (!isObject(config)) return config;
  if (isObject(config.retryThrottling))
    config.retryThrottling = asA6Spells(config.retryThrottling, FIELDS_OF.retryThrottling, "retryThrottling", spellings);
  if (!Array.isArray(config.methodConfig)) return config;
  config.methodConfig = config.methodConfig.map((entry: unknown, index) => {
    const at = `methodConfig[${index}]`;
    const method = asA6Spells(entry, FIELDS_OF.method, at, spellings);
    if (!isObject(method)) return method;
    if (Array.isArray(method.name))
      method.name = method.name.map((name: unknown, nameIndex) => asA6Spells(name, FIELDS_OF.name, `${at}.name[${nameIndex}]`, spellings));
    for (const policy of ["retryPolicy", "hedgingPolicy"] as const)
      if (method[policy] !== undefined) method[policy] = asA6Spells(method[policy], FIELDS_OF[policy], `${at}.${policy}`, spellings);
    return method;
  });
  return config;
}

/** What a reading says of a field the file spells otherwise than A6. */
const spellingNote = (spelled: string, field: string) =>
  `the file spells it ${spelled}: grpc-go reads it as ${field} (${GO_SOURCE}, matched whatever the case); grpc-js requires ${field} and rejects the service config`;

/** The reading with a note on each field the file spells otherwise than A6. */
function withSpellings(reading: PolicyReading, spellings: ReadonlyMap<string, string>): PolicyReading {
  const note = (path: string) => {
    const spelled = spellings.get(path);
    return spelled === undefined ? undefined : spellingNote(spelled, path.slice(path.lastIndexOf(".") + 1));
  };
  const joined = (...parts: (string | undefined)[]) => parts.filter((part) => part !== undefined).join("; ") || undefined;
  return {
    ...reading,
    fields: reading.fields.map((field) => {
      const approximation = joined(note(field.field), field.approximation);
      return approximation === undefined ? field : { ...field, approximation };
    }),
    unmodeled: reading.unmodeled.map((field) => ({ ...field, why: joined(field.why, note(field.field))! })),
  };
}

/** A path as A6 spells it, in the file's own spelling, for an edit. */
function spelledPath(path: readonly (string | number)[], spellings: ReadonlyMap<string, string>): (string | number)[] {
  let at = "";
  return path.map((segment) => {
    if (typeof segment === "number") {
      at += `[${segment}]`;
      return segment;
    }
    at += `${at === "" ? "" : "."}${segment}`;
    return spellings.get(at) ?? segment;
  });
}

/**
 * A backoff or delay as grpc-go reads it: its internal/serviceconfig Duration takes ".01s" (no digit
 * before the point, as grpc-go's example and A6's own ".1s" write it), which grpc-js refuses.
 */
function durationAt(value: unknown, field: string, positive = true): { ms: number; note?: string } {
  if (typeof value !== "string" || !/^\.\d/.test(value)) return { ms: protoDurationAt(value, field, positive) };
  try {
    return {
      ms: protoDurationAt(`0${value}`, field, positive),
      note: `${value}: grpc-go reads it as 0${value}; grpc-js requires a digit before the point and rejects the service config`,
    };
  } catch {
    return { ms: protoDurationAt(value, field, positive) };
  }
}

function parseConfig(text: string): ServiceConfig {
  const errors: ParseError[] = [];
  const root: unknown = parse(text, errors, { allowTrailingComma: true });
  const error = errors[0];
  if (error !== undefined) {
    const line = text.slice(0, error.offset).split("\n").length;
    throw new ConfigFileError(`line ${line}: not valid JSON: ${printParseErrorCode(error.error)}`);
  }
  const spellings = new Map<string, string>();
  const config = objectAt(respelled(root, spellings), "service config", "gRPC's service config, with methodConfig");
  const methods = listAt(config.methodConfig ?? [], "methodConfig", "gRPC's method configs").map((method, index) =>
    objectAt(method, `methodConfig[${index}]`, "a method config"),
  );
  if (methods.length === 0)
    throw new ConfigFileError("methodConfig: no method config, so no retry policy: gRPC then makes one attempt per call");
  return { root: config, methods, spellings };
}

/** How the file names the methods a methodConfig applies to. */
function methodNames(method: JsonObject, index: number): string {
  const names = listAt(method.name ?? [], `methodConfig[${index}].name`, "a list of { service, method }").map((name, at) => {
    const entry = objectAt(name, `methodConfig[${index}].name[${at}]`, "{ service, method }");
    if (entry.service === undefined || entry.service === "") return "every method";
    return entry.method === undefined || entry.method === "" ? String(entry.service) : `${String(entry.service)}/${String(entry.method)}`;
  });
  return `methodConfig[${index}] (${names.length === 0 ? "no name: it applies to none" : names.join(", ")})`;
}

/** maxAttempts as gRPC applies it: at least 2, above 5 treated as 5. */
function readMaxAttempts(builder: PolicyBuilder, value: unknown, field: string): void {
  const attempts = integerAt(value, field, 2, Number.MAX_SAFE_INTEGER, false);
  const capped = Math.min(attempts, GRPC_MAX_ATTEMPTS);
  builder.read(
    field,
    String(value),
    { "max-attempts": String(capped) },
    A6,
    attempts > GRPC_MAX_ATTEMPTS ? `A6 treats maxAttempts above ${GRPC_MAX_ATTEMPTS} as ${GRPC_MAX_ATTEMPTS}` : undefined,
  );
}

function readRetryPolicy(builder: PolicyBuilder, policy: JsonObject, at: string): void {
  for (const key of ["maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"]) {
    if (policy[key] === undefined)
      throw new ConfigFileError(`${at}.${key}: missing; A6 requires it, and gRPC rejects the whole service config without it`);
  }
  readMaxAttempts(builder, policy.maxAttempts, `${at}.maxAttempts`);
  const initial = durationAt(policy.initialBackoff, `${at}.initialBackoff`);
  const max = durationAt(policy.maxBackoff, `${at}.maxBackoff`);
  builder.read(
    `${at}.initialBackoff`,
    String(policy.initialBackoff),
    { strategy: "grpc", "min-delay": ms(initial.ms), jitter: GRPC_JITTER },
    A6,
    [initial.note, BACKOFF_APPROXIMATION].filter((part) => part !== undefined).join("; "),
  );
  builder.read(`${at}.maxBackoff`, String(policy.maxBackoff), { "max-delay": ms(max.ms) }, A6, max.note);
  const multiplier = numberAt(policy.backoffMultiplier, `${at}.backoffMultiplier`, { above: 0 });
  builder.read(
    `${at}.backoffMultiplier`,
    String(multiplier),
    { "backoff-factor": String(Math.max(1, multiplier)) },
    A6,
    multiplier < 1 ? "our model's waits never shrink: a multiplier below 1 is read as 1, waits that stay at initialBackoff" : undefined,
  );
  listAt(policy.retryableStatusCodes, `${at}.retryableStatusCodes`, "status codes");
  builder.skip(
    `${at}.retryableStatusCodes`,
    policy.retryableStatusCodes,
    "which status codes are retried; our model has one kind of failure, and every failure is retried",
  );
  skipOthers(
    builder,
    policy,
    at,
    ["maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"],
    "retryPolicy",
  );
}

function readHedgingPolicy(builder: PolicyBuilder, policy: JsonObject, at: string): void {
  if (policy.maxAttempts === undefined)
    throw new ConfigFileError(`${at}.maxAttempts: missing; A6 requires it, and gRPC rejects the whole service config without it`);
  readMaxAttempts(builder, policy.maxAttempts, `${at}.maxAttempts`);
  const delay = policy.hedgingDelay === undefined ? { ms: 0 } : durationAt(policy.hedgingDelay, `${at}.hedgingDelay`, false);
  builder.read(
    `${at}.hedgingDelay`,
    policy.hedgingDelay === undefined ? defaulted("0s: every copy at once") : String(policy.hedgingDelay),
    { strategy: "fixed", "hedge-delay": ms(delay.ms) },
    A6,
    delay.note,
  );
  if (policy.nonFatalStatusCodes === undefined) {
    builder.read(
      `${at}.nonFatalStatusCodes`,
      defaulted("none: every failure is fatal"),
      {},
      A6,
      "gRPC ends the call at the first failed copy; our model sends the next copy at once instead",
    );
  } else {
    builder.skip(
      `${at}.nonFatalStatusCodes`,
      policy.nonFatalStatusCodes,
      "which failures let the other copies go on; our model treats every failure so",
    );
  }
  skipOthers(builder, policy, at, ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"], "hedgingPolicy");
}

function skipOthers(
  builder: PolicyBuilder,
  object: JsonObject,
  at: string,
  known: readonly string[],
  what: string,
  why: Readonly<Record<string, string>> = {},
): void {
  for (const [key, value] of Object.entries(object)) {
    if (!known.includes(key))
      builder.skip(`${at}${at === "" ? "" : "."}${key}`, value, why[key] ?? `not a field of gRPC's ${what}; grpc-js ignores it`);
  }
}

function readThrottling(builder: PolicyBuilder, root: JsonObject, hedging: boolean): void {
  if (root.retryThrottling === undefined) {
    builder.read("retryThrottling", "absent", {}, A6, "no retry budget: every call may make all its attempts");
    return;
  }
  const throttling = objectAt(root.retryThrottling, "retryThrottling", "{ maxTokens, tokenRatio }");
  const tokens = numberAt(throttling.maxTokens, "retryThrottling.maxTokens", { above: 0, max: 1000 });
  const ratio = numberAt(throttling.tokenRatio, "retryThrottling.tokenRatio", { above: 0 });
  const rounded = (value: number) => Number(value.toFixed(3));
  const roundedNote = (value: number) => (rounded(value) === value ? "" : `; gRPC keeps 3 decimals: ${rounded(value)}`);
  // grpc-js checks the tokens only before a retry (as choose's hedging snippet says); A6 withholds hedges too, and so does our model.
  const hedgeNote = hedging ? "; grpc-js (1.14) sends hedged copies whatever its tokens, though A6 and our model withhold them" : "";
  builder.read(
    "retryThrottling.maxTokens",
    String(throttling.maxTokens),
    { budget: "grpc", "budget-tokens": String(rounded(tokens)) },
    A6,
    THROTTLING_SCOPE + roundedNote(tokens) + hedgeNote,
  );
  builder.read(
    "retryThrottling.tokenRatio",
    String(throttling.tokenRatio),
    { "budget-ratio": String(rounded(ratio)) },
    A6,
    roundedNote(ratio).slice(2) || undefined,
  );
  skipOthers(builder, throttling, "retryThrottling", ["maxTokens", "tokenRatio"], "retryThrottling");
}

function readMethod(config: ServiceConfig, index: number): PolicyReading {
  const method = config.methods[index]!;
  const at = `methodConfig[${index}]`;
  const builder = new PolicyBuilder();
  if (method.retryPolicy !== undefined && method.hedgingPolicy !== undefined) {
    throw new ConfigFileError(`${at}: has both retryPolicy and hedgingPolicy; A6 allows one, and gRPC rejects the service config`);
  }
  if (method.retryPolicy !== undefined)
    readRetryPolicy(builder, objectAt(method.retryPolicy, `${at}.retryPolicy`, "A6's retryPolicy"), `${at}.retryPolicy`);
  else if (method.hedgingPolicy !== undefined)
    readHedgingPolicy(builder, objectAt(method.hedgingPolicy, `${at}.hedgingPolicy`, "A6's hedgingPolicy"), `${at}.hedgingPolicy`);
  else
    builder.read(
      `${at}.retryPolicy`,
      "absent",
      { strategy: "fixed", "max-attempts": "1" },
      A6,
      "without a retryPolicy or hedgingPolicy gRPC makes one attempt per call",
    );
  readThrottling(builder, config.root, method.hedgingPolicy !== undefined);
  if (method.timeout !== undefined && typeof method.timeout === "string") protoDurationAt(method.timeout, `${at}.timeout`, false);
  skipOthers(builder, method, at, ["name", "retryPolicy", "hedgingPolicy"], "method config", METHOD_FIELDS);
  skipOthers(builder, config.root, "", ["methodConfig", "retryThrottling"], "service config", TOP_FIELDS);
  return withSpellings(builder.build(methodNames(method, index)), config.spellings);
}

function read(text: string): ConfigReading {
  const config = parseConfig(text);
  return { policies: config.methods.map((_, index) => readMethod(config, index)) };
}

/** The flags gRPC's service config can say. */
const GRPC_SAYABLE: readonly CheckFlag[] = [
  "strategy",
  "min-delay",
  "max-delay",
  "backoff-factor",
  "jitter",
  "max-attempts",
  "hedge-delay",
  "budget",
  "budget-tokens",
  "budget-ratio",
];

/** The file's indentation and line ends, so that a changed line looks like its neighbours. */
function formattingOf(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
  return {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

type Mode = "retry" | "hedge" | "none";

const modeOf = (settings: FlagSettings): Mode =>
  Number(effective(settings, "max-attempts")) === 1 ? "none" : settings["hedge-delay"] !== undefined ? "hedge" : "retry";

/** The attempts to write: gRPC says at most 5, and nothing for no limit. */
function attemptsFor(target: FlagSettings, notes: string[]): number {
  const attempts = Number(effective(target, "max-attempts"));
  if (attempts === 0 || attempts > GRPC_MAX_ATTEMPTS) {
    notes.push(
      `gRPC allows at most ${GRPC_MAX_ATTEMPTS} attempts (A6: larger values are treated as ${GRPC_MAX_ATTEMPTS}); the target had ${attempts === 0 ? "no limit" : attempts}`,
    );
    return GRPC_MAX_ATTEMPTS;
  }
  return attempts;
}

/** A methodConfig's edits for the target: [path, value] pairs, undefined to remove. */
function methodEdits(
  index: number,
  target: FlagSettings,
  current: FlagSettings,
  notes: string[],
): [(string | number)[], unknown][] | string {
  const at = ["methodConfig", index];
  const mode = modeOf(target);
  const currentMode = modeOf(current);
  const changed = (flag: string) => mode !== currentMode || !sameFlag(flag, target, current);
  const edits: [(string | number)[], unknown][] = [];
  if (currentMode !== mode && currentMode !== "none")
    edits.push([[...at, currentMode === "retry" ? "retryPolicy" : "hedgingPolicy"], undefined]);
  if (mode === "hedge") {
    const backoff = ["min-delay", "max-delay", "backoff-factor", "jitter"].find((flag) => target[flag] !== undefined);
    if (backoff !== undefined)
      return `a hedged method has no backoff in gRPC (A6: hedgingPolicy or retryPolicy); it cannot say -${backoff} with -hedge-delay`;
    const hedging = [...at, "hedgingPolicy"];
    if (changed("max-attempts")) edits.push([[...hedging, "maxAttempts"], attemptsFor(target, notes)]);
    if (changed("hedge-delay")) edits.push([[...hedging, "hedgingDelay"], protoDurationFor(target["hedge-delay"]!, "hedgingDelay", notes)]);
    if (currentMode !== "hedge") {
      edits.push([[...hedging, "nonFatalStatusCodes"], ["UNAVAILABLE"]]);
      notes.push("nonFatalStatusCodes UNAVAILABLE is added, so that a failed copy lets the others go on as in our model");
    }
  } else if (mode === "retry") {
    const strategy = target.strategy ?? "fixed";
    if (strategy !== "grpc" || Number(effective(target, "jitter")) !== Number(GRPC_JITTER)) {
      return `gRPC's retry backoff is min(initialBackoff x backoffMultiplier^(n-1), maxBackoff) x U(0.8, 1.2), our grpc strategy with -jitter ${GRPC_JITTER}; it cannot say -strategy ${strategy}${strategy === "grpc" ? ` -jitter ${effective(target, "jitter")}` : ""}`;
    }
    const retry = [...at, "retryPolicy"];
    if (changed("max-attempts")) edits.push([[...retry, "maxAttempts"], attemptsFor(target, notes)]);
    if (changed("min-delay"))
      edits.push([[...retry, "initialBackoff"], protoDurationFor(effective(target, "min-delay")!, "initialBackoff", notes)]);
    if (changed("max-delay"))
      edits.push([[...retry, "maxBackoff"], protoDurationFor(effective(target, "max-delay")!, "maxBackoff", notes)]);
    if (changed("backoff-factor")) edits.push([[...retry, "backoffMultiplier"], Number(effective(target, "backoff-factor"))]);
    if (currentMode !== "retry") {
      edits.push([[...retry, "retryableStatusCodes"], ["UNAVAILABLE"]]);
      notes.push("retryableStatusCodes UNAVAILABLE is added (what gRPC makes of HTTP 502, 503 and 504); A6 requires a list");
    }
  }
  return edits;
}

/** retryThrottling's edits for the target's budget. */
function throttlingEdits(
  target: FlagSettings,
  current: FlagSettings,
  hasThrottling: boolean,
  notes: string[],
): [(string | number)[], unknown][] | string {
  const budget = target.budget ?? "";
  if (budget !== "" && budget !== "grpc") return `gRPC's only budget is retryThrottling, our -budget grpc; it cannot say -budget ${budget}`;
  const want = budget === "grpc";
  const has = current.budget === "grpc";
  if (!want)
    return has || hasThrottling
      ? (notes.push("retryThrottling is removed for the whole channel, every method"), [[["retryThrottling"], undefined]])
      : [];
  const edits: [(string | number)[], unknown][] = [];
  for (const [flag, field] of [
    ["budget-tokens", "maxTokens"],
    ["budget-ratio", "tokenRatio"],
  ] as const) {
    if (has && sameFlag(flag, target, current)) continue;
    const value = Number(effective(target, flag));
    const rounded = Number(value.toFixed(3));
    if (rounded !== value) notes.push(`retryThrottling.${field} keeps 3 decimals in gRPC: ${rounded} for ${value}`);
    edits.push([["retryThrottling", field], rounded]);
  }
  if (edits.length > 0) notes.push("retryThrottling applies to the whole channel, every method");
  return edits;
}

function write(text: string, policyIndex: number, target: FlagSettings): Written {
  const config = parseConfig(text);
  if (config.methods[policyIndex] === undefined)
    throw new RangeError(`no policy ${policyIndex} in this service config (it has ${config.methods.length})`);
  const why = unsayable(target, GRPC_SAYABLE, "gRPC's service config");
  if (why !== undefined) return { kind: "inexpressible", why };
  const current = readMethod(config, policyIndex).settings;
  const notes: string[] = [];
  const method = methodEdits(policyIndex, target, current, notes);
  if (typeof method === "string") return { kind: "inexpressible", why: method };
  const throttling = throttlingEdits(target, current, config.root.retryThrottling !== undefined, notes);
  if (typeof throttling === "string") return { kind: "inexpressible", why: throttling };
  const formattingOptions = formattingOf(text);
  let written = text;
  for (const [path, value] of [...method, ...throttling])
    written = applyEdits(written, modify(written, spelledPath(path, config.spellings), value, { formattingOptions }));
  return { kind: "written", text: written, notes };
}

/** A JSON object with methodConfig or retryThrottling at its top. */
function recognizes(text: string): boolean {
  if (!/"(methodConfig|retryThrottling)"/.test(text)) return false;
  const location = getLocation(
    text,
    text.indexOf('"methodConfig"') >= 0 ? text.indexOf('"methodConfig"') + 1 : text.indexOf('"retryThrottling"') + 1,
  );
  return location.path.length === 1;
}

export const grpcFormat: ConfigFormat = {
  name: "grpc",
  title: "gRPC service config (JSON)",
  source: `${A6}; ${SERVICE_CONFIG}`,
  recognizes,
  read,
  write,
  knobs: ["max-attempts", "min-delay", "max-delay", "backoff-factor", "hedge-delay", "budget", "budget-tokens", "budget-ratio"],
};

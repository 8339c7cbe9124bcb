import { applyEdits, type JSONPath, modify, type ParseError, parse, printParseErrorCode } from "jsonc-parser";
import { nextDelay } from "../../backoff/delay.ts";
import type { BackoffPolicy } from "../../backoff/policy.ts";
import type { Random } from "../../backoff/random.ts";
import { formatDuration } from "../../cli/duration.ts";
import { UsageError } from "../../cli/usage-error.ts";
import { type FlagSettings, simValuesFor } from "../../recommend/settings.ts";
import { MECHANISMS, type ProtectionValues, resolveProtection } from "../../strategies/protection.ts";
import { buildStrategyPolicy, findStrategy, type StrategyName, type StrategyParameterValues } from "../../strategies/registry.ts";
import {
  type CheckFlag,
  ConfigFileError,
  type ConfigFormat,
  type FieldReading,
  type PolicyReading,
  type UnmodeledField,
  type Written,
} from "../format.ts";
import { notFinite } from "./envoy-shared.ts";

/*
 * What the JSON formats of JavaScript and .NET retry libraries share (Polly's appsettings.json,
 * cockatiel's and p-retry's options): reading a JSON options object with jsonc-parser, with one
 * printable line for a file that is wrong; the meaning of a policy (its waits, attempts, timeout
 * and protections), so that a write changes only what must change; and the edits themselves,
 * made with jsonc-parser's modify, which keeps the file's comments, order and indentation.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A JSON path as people read it: `Retry.Delay`, `policies.api.retry.maxAttempts`. */
export function pathText(path: JSONPath): string {
  return path.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : text === "" ? part : `${text}.${part}`), "");
}

/** The file's JSON (comments and trailing commas allowed, as .NET's configuration and most editors allow them). */
export function parseJson(file: string, what: string): Json {
  const text = withoutBom(file);
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as Json | undefined;
  const first = errors[0];
  if (first !== undefined) {
    const before = text.slice(0, first.offset).split("\n");
    throw new ConfigFileError(
      `line ${before.length}, column ${before.at(-1)!.length + 1}: ${printParseErrorCode(first.error)}; ${what} is JSON (comments allowed)`,
    );
  }
  if (value === undefined) throw new ConfigFileError(`the file is empty; ${what} is a JSON object`);
  return value;
}

/** Editors on Windows save appsettings.json with a byte order mark, which .NET skips and jsonc-parser does not. */
const BOM = "\uFEFF";
const withoutBom = (text: string): string => (text.startsWith(BOM) ? text.slice(BOM.length) : text);

/** The value as the file writes it, for FieldReading.value. */
export const valueText = (value: Json): string => (typeof value === "string" ? value : JSON.stringify(value));

/** A FieldReading for a field the file omits: its documented default. */
export const defaultText = (description: string): string => `default (${description})`;

/** Milliseconds as our flags write them. */
export const ms = (value: number): string => formatDuration(value);

/**
 * Node's timers wait at most 2^31 - 1 ms: a longer setTimeout fires after 1 ms, with a
 * TimeoutOverflowWarning (Node.js docs, "Timers", setTimeout). A JavaScript library's "no cap"
 * is read as this cap, the longest wait it can make.
 */
export const NODE_TIMER_MAX_MS = 2 ** 31 - 1;

interface NumberRule {
  readonly min?: number;
  readonly above?: number;
  readonly max?: number;
  readonly below?: number;
  readonly integer?: boolean;
  /** What is allowed, for the message: `a whole number of retries, 0 or more`. */
  readonly allowed: string;
}

/** A number field, or a ConfigFileError naming the field, what is wrong and what is allowed. */
export function numberAt(value: Json | undefined, field: string, rule: NumberRule): number {
  const wrong = (what: string) => new ConfigFileError(`${field}: ${what}, ${rule.allowed}`);
  if (value === undefined) throw wrong("missing");
  // A number past the double's range reads as Infinity, which JSON would print as null.
  if (typeof value === "number" && !Number.isFinite(value)) throw wrong(notFinite(value));
  if (typeof value !== "number") throw wrong(`${JSON.stringify(value)} is not a number`);
  if (rule.integer === true && !Number.isInteger(value)) throw wrong(`${value} is not a whole number`);
  if (rule.min !== undefined && value < rule.min) throw wrong(`${value} is below ${rule.min}`);
  if (rule.above !== undefined && value <= rule.above) throw wrong(`${value} is not above ${rule.above}`);
  if (rule.max !== undefined && value > rule.max) throw wrong(`${value} is above ${rule.max}`);
  if (rule.below !== undefined && value >= rule.below) throw wrong(`${value} is not below ${rule.below}`);
  return value;
}

/** A boolean field, or a ConfigFileError. */
export function booleanAt(value: Json, field: string): boolean {
  if (typeof value !== "boolean") throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not a boolean, true or false`);
  return value;
}

/** An object field, or a ConfigFileError. */
export function objectAt(value: Json | undefined, field: string, allowed: string): JsonObject {
  if (value === undefined) throw new ConfigFileError(`${field}: missing, ${allowed}`);
  if (!isObject(value)) throw new ConfigFileError(`${field}: ${JSON.stringify(value)} is not an object, ${allowed}`);
  return value;
}

/** One policy's fields, unmodelled fields and settings as a reader collects them. */
export class PolicyRecorder {
  private readonly fields: FieldReading[] = [];
  private readonly unmodeled: UnmodeledField[] = [];
  private readonly settings: Record<string, string> = {};

  field(field: string, value: string, settings: FlagSettings, source: string, approximation?: string): void {
    this.fields.push({ field, value, settings, source, ...(approximation === undefined ? {} : { approximation }) });
    Object.assign(this.settings, settings);
  }

  notModelled(field: string, value: Json, why: string): void {
    this.unmodeled.push({ field, value: valueText(value), why });
  }

  reading(name: string): PolicyReading {
    if (this.settings.strategy === undefined) throw new Error(`unreachable: the reading of ${name} set no strategy`);
    return { name, settings: { ...this.settings }, fields: [...this.fields], unmodeled: [...this.unmodeled] };
  }
}

/**
 * The options objects of a file that holds one, or a map of names to them: `{ "retries": 5 }` is
 * one policy, `{ "github": { "retries": 5 }, "db": { ... } }` two. Undefined when it is neither.
 */
export function namedOptions(root: Json, isOptions: (value: JsonObject) => boolean): { name: string; path: JSONPath }[] | undefined {
  if (!isObject(root)) return undefined;
  if (isOptions(root)) return [{ name: "the file's options", path: [] }];
  const entries = Object.entries(root);
  if (entries.length === 0 || !entries.every(([, value]) => isObject(value) && isOptions(value))) return undefined;
  return entries.map(([name]) => ({ name, path: [name] }));
}

/** The value at a path, or undefined. */
export function valueAt(root: Json, path: JSONPath): Json | undefined {
  let node: Json | undefined = root;
  for (const part of path) {
    if (Array.isArray(node) && typeof part === "number") node = node[part];
    else if (isObject(node) && typeof part === "string") node = Object.hasOwn(node, part) ? node[part] : undefined;
    else return undefined;
  }
  return node;
}

/** A change to one field: a new value, or `undefined` to remove it. */
export interface Edit {
  readonly path: JSONPath;
  readonly value: Json | undefined;
}

/** The JSON value with the edits made (a copy); missing parent objects are created, as modify does in the text. */
function withEdits(root: Json, edits: readonly Edit[]): Json {
  const copy = structuredClone(root);
  for (const edit of edits) {
    let parent: Json | undefined = copy;
    for (const part of edit.path.slice(0, -1)) {
      if (!isObject(parent)) break;
      const key = String(part);
      if (!isObject(parent[key])) {
        if (edit.value === undefined) break;
        parent[key] = {};
      }
      parent = parent[key];
    }
    const key = String(edit.path.at(-1));
    if (!isObject(parent)) continue;
    if (edit.value === undefined) delete parent[key];
    else parent[key] = edit.value;
  }
  return copy;
}

/** The text with the edits made by jsonc-parser, in the file's own indentation and line ends. */
function editText(text: string, edits: readonly Edit[]): string {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  const formattingOptions = {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
  const edited = edits.reduce(
    (current, edit) => applyEdits(current, modify(current, edit.path, edit.value, { formattingOptions })),
    withoutBom(text),
  );
  return text.startsWith(BOM) ? BOM + edited : edited;
}

/** The shortest decimal that `accept` takes for a computed number (no 0.30000000000000004 in a user's file). */
export function shortestNumber(value: number, accept: (candidate: number) => boolean = (candidate) => close(candidate, value)): number {
  for (let digits = 1; digits <= 17; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (accept(candidate)) return candidate;
  }
  return value;
}

/** Equal within a millionth (and a millionth of a millisecond): what a decimal text or a TimeSpan's ticks can round away. */
function close(a: number, b: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** What a target asks for, in the simulator's own terms. */
export interface ResolvedTarget {
  readonly policy: BackoffPolicy;
  /** Attempts including the first; 0 for no limit. */
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly hedgeDelayMs: number | undefined;
  readonly fleet: ReturnType<typeof resolveProtection>;
}

/** A target's flags (absent ones at our defaults), read by the simulator's own flag rules. */
export function resolveTarget(settings: FlagSettings): ResolvedTarget {
  const values = simValuesFor({}, settings) as unknown as Record<string, unknown>;
  const strategy = findStrategy(String(values.strategy))!.name as StrategyName;
  return {
    policy: buildStrategyPolicy(strategy, values as unknown as StrategyParameterValues),
    maxAttempts: values["max-attempts"] as number,
    timeoutMs: values.timeout as number,
    hedgeDelayMs: values["hedge-delay"] as number | undefined,
    fleet: resolveProtection(values as unknown as ProtectionValues),
  };
}

/** Our clients' per-attempt timeout when no flag sets it: what a format without a timeout field leaves it at. */
const DEFAULT_TIMEOUT_MS = simValuesFor({}, {}).timeout;

/** Retries compared when there is no attempt limit: far past any cap a real policy reaches. */
const COMPARED_RETRIES = 200;
/** Points of each draw at which two policies' waits are compared: equal there, equal in distribution for these formulas. */
const QUANTILES = [0, 0.25, 0.5, 0.9, 1 - 2 ** -20];

/** A draw that always returns `u`. */
function quantileRandom(u: number): Random {
  return {
    uniform: () => u,
    uniformInt: (maxExclusive) => Math.floor(u * maxExclusive),
    exponential: (mean) => -mean * Math.log(1 - u),
    normal: (mean, deviation) => mean + deviation * Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * u),
  };
}

/** The policy's wait before each retry with every draw at quantile `u`. */
function waitsAt(policy: BackoffPolicy, retries: number, u: number): number[] {
  const random = quantileRandom(u);
  const waits: number[] = [];
  let previous: number | undefined;
  for (let attempt = 1; attempt <= retries; attempt++) {
    const wait = nextDelay(policy, attempt, previous, random) ?? Infinity;
    waits.push(wait);
    previous = wait;
  }
  return waits;
}

/** The flags a protection reads, with their values, for comparing two fleets. */
function protectionKey(settings: FlagSettings): string {
  const values = simValuesFor({}, settings) as unknown as Record<string, unknown>;
  const parts: string[] = [];
  for (const mechanism of MECHANISMS) {
    if (values[mechanism.flag] !== mechanism.choice) continue;
    parts.push(`${mechanism.flag}=${mechanism.choice}`);
    for (const flag of mechanism.reads) parts.push(`${flag}=${String(values[flag])}`);
  }
  return parts.join(" ");
}

/**
 * Why two settings do not mean the same policy, or undefined when they do: the same waits at
 * every quantile of their draws for every retry made, the same attempts, per-try timeout, hedging
 * and protections with their parameters. `fixed 1s` and `grpc 1s x1, jitter 0` are the same.
 */
export function meaningDifference(a: FlagSettings, b: FlagSettings): string | undefined {
  const left = resolveTarget(a);
  const right = resolveTarget(b);
  if (left.maxAttempts !== right.maxAttempts) return `max-attempts ${left.maxAttempts} against ${right.maxAttempts}`;
  if (!close(left.timeoutMs, right.timeoutMs)) return `timeout ${ms(left.timeoutMs)} against ${ms(right.timeoutMs)}`;
  if (left.hedgeDelayMs !== right.hedgeDelayMs) return "hedging differs";
  const leftProtection = protectionKey(a);
  const rightProtection = protectionKey(b);
  if (leftProtection !== rightProtection) return `protection "${leftProtection}" against "${rightProtection}"`;
  const retries = left.maxAttempts === 0 ? COMPARED_RETRIES : Math.min(COMPARED_RETRIES, left.maxAttempts - 1);
  for (const u of QUANTILES) {
    const leftWaits = waitsAt(left.policy, retries, u);
    const rightWaits = waitsAt(right.policy, retries, u);
    const index = leftWaits.findIndex((wait, at) => !close(wait, rightWaits[at]!));
    if (index >= 0) return `retry ${index + 1} waits ${ms(leftWaits[index]!)} against ${ms(rightWaits[index]!)} at quantile ${u}`;
  }
  return undefined;
}

const sameMeaning = (a: FlagSettings, b: FlagSettings): boolean => meaningDifference(a, b) === undefined;

/** The protections and hedging a format cannot say, as the reason a target is inexpressible; undefined when it has none of them. */
export function unsupportedMechanisms(target: ResolvedTarget, system: string, hasTimeout = false): string | undefined {
  if (target.hedgeDelayMs !== undefined) return `${system} does not hedge requests (-hedge-delay)`;
  if (!hasTimeout && !close(target.timeoutMs, DEFAULT_TIMEOUT_MS))
    return `${system} has no per-attempt timeout here; the reading leaves -timeout at our default, ${ms(DEFAULT_TIMEOUT_MS)}`;
  if (target.fleet.budget !== undefined) return `${system} has no retry budget (-budget ${target.fleet.budget.kind})`;
  if (target.fleet.throttle !== undefined) return `${system} has no adaptive throttle (-throttle sre)`;
  return undefined;
}

/** How one format reads a policy of a parsed file and which edits would make it mean a target. */
export interface EditableFormat {
  /** For notes: `p-retry`. */
  readonly system: string;
  readonly interpret: (root: Json, policyIndex: number) => PolicyReading;
  /** Every edit that may be needed to say `target`, or why the format cannot say it. */
  readonly edits: (root: Json, policyIndex: number, target: ResolvedTarget) => readonly Edit[] | string;
}

/** The smallest set of the edits after which the file means the target, or undefined if none does. */
function smallestEdit(root: Json, edits: readonly Edit[], means: (candidate: Json) => boolean): Edit[] | undefined {
  const count = edits.length;
  const subsets = Array.from({ length: 2 ** count }, (_, mask) => mask).sort((a, b) => bitCount(a) - bitCount(b) || a - b);
  for (const mask of subsets) {
    const chosen = edits.filter((_, index) => (mask & (1 << index)) !== 0);
    if (means(withEdits(root, chosen))) return chosen;
  }
  return undefined;
}

const bitCount = (mask: number): number => (mask === 0 ? 0 : (mask & 1) + bitCount(mask >>> 1));

/**
 * The text with policy `policyIndex` changed to mean `target`, touching the fewest fields: the
 * same text when it already means it. Where no edit says the target exactly (a value the format
 * rounds), every edit is made and a note says what differs.
 */
function writeTarget(format: EditableFormat, text: string, root: Json, policyIndex: number, target: FlagSettings): Written {
  let resolved: ResolvedTarget;
  try {
    resolved = resolveTarget(target);
  } catch (error) {
    if (error instanceof UsageError) return { kind: "inexpressible", why: `not a policy our simulator runs: ${error.message}` };
    throw error;
  }
  const current = format.interpret(root, policyIndex);
  if (sameMeaning(current.settings, target)) return { kind: "written", text, notes: [] };
  const wanted = format.edits(root, policyIndex, resolved);
  if (typeof wanted === "string") return { kind: "inexpressible", why: wanted };
  // An edit that writes what is already there changes nothing: leaving it out keeps the search small.
  const edits = wanted.filter((edit) => JSON.stringify(valueAt(root, edit.path)) !== JSON.stringify(edit.value));
  const reads = (candidate: Json): PolicyReading | ConfigFileError => {
    try {
      return format.interpret(candidate, policyIndex);
    } catch (error) {
      if (error instanceof ConfigFileError) return error;
      throw error;
    }
  };
  const means = (candidate: Json, settings: FlagSettings) => {
    const reading = reads(candidate);
    return !(reading instanceof ConfigFileError) && sameMeaning(reading.settings, settings);
  };
  const exact = smallestEdit(root, edits, (candidate) => means(candidate, target));
  // Where nothing says the target exactly (a value the format rounds or bounds), the edits that change anything.
  const chosen = exact ?? edits.filter((edit) => !means(withEdits(root, [edit]), current.settings));
  const written = reads(withEdits(root, chosen));
  if (written instanceof ConfigFileError) return { kind: "inexpressible", why: `${format.system} would refuse it: ${written.message}` };
  const notes: string[] = [];
  if (exact === undefined) notes.push(`the nearest ${format.system} can say: ${meaningDifference(written.settings, target)}`);
  const changed = chosen.map((edit) => pathText(edit.path));
  for (const field of written.fields) {
    if (field.approximation !== undefined && changed.some((path) => field.field === path || field.field.startsWith(`${path}.`)))
      notes.push(`${field.field}: ${field.approximation}`);
  }
  return { kind: "written", text: editText(text, chosen), notes };
}

/** Points of the uniform draw in the quadrature of decorrelatedV2Means. */
const QUADRATURE_POINTS = 4000;

/**
 * The mean wait before each of the first `retries` retries of Polly's DecorrelatedJitterBackoffV2
 * (Polly.Core RetryHelper.cs; cockatiel's decorrelatedJitterGenerator is the same formula with
 * its `exponent` for Polly's 2), before any cap. Retry t waits (g(t-1+U_t) - g(t-2+U_t-1)) x
 * initial / 1.4 with g(x) = exponent^x x tanh(sqrt(4x)) and g = 0 before the first: its mean is
 * the difference of G(t) = E[g(t + U)], found by the midpoint rule.
 */
export function decorrelatedV2Means(exponent: number, initialMs: number, retries: number): number[] {
  const g = (x: number) => exponent ** x * Math.tanh(Math.sqrt(4 * x));
  const meanG = (t: number) => {
    let sum = 0;
    for (let point = 0; point < QUADRATURE_POINTS; point++) sum += g(t + (point + 0.5) / QUADRATURE_POINTS);
    return sum / QUADRATURE_POINTS;
  };
  const means: number[] = [];
  let previous = 0;
  for (let t = 0; t < retries; t++) {
    const current = meanG(t);
    means.push(((current - previous) / 1.4) * initialMs);
    previous = current;
  }
  return means;
}

/** The mean waits of our decorrelated-jitter (AWS's: min(cap, U(base, 3 x previous)), the first from base), before the cap. */
export function awsDecorrelatedMeans(baseMs: number, retries: number): number[] {
  const means: number[] = [];
  let previous = baseMs;
  for (let retry = 1; retry <= retries; retry++) {
    previous = (baseMs + 3 * previous) / 2;
    means.push(previous);
  }
  return means;
}

/** Retries whose mean waits a decorrelated-jitter note shows. */
const NOTE_RETRIES = 5;

const notes = new Map<string, string>();

/** How Polly's and cockatiel's decorrelated jitter differs from ours, with both mean waits for the file's values. */
export function decorrelatedNote(system: string, exponent: number, initialMs: number, retries: number): string {
  const key = JSON.stringify([system, exponent, initialMs, retries]);
  const known = notes.get(key);
  if (known !== undefined) return known;
  const note = describeDecorrelated(system, exponent, initialMs, retries);
  notes.set(key, note);
  return note;
}

function describeDecorrelated(system: string, exponent: number, initialMs: number, retries: number): string {
  const shown = Math.max(1, Math.min(NOTE_RETRIES, retries));
  const rounded = (values: number[]) => values.map((value) => ms(Math.round(value))).join(", ");
  const theirs = rounded(decorrelatedV2Means(exponent, initialMs, shown));
  const ours = rounded(awsDecorrelatedMeans(initialMs, shown));
  return (
    `${system} draws Polly's decorrelated jitter V2, (g(t + U) - g(t - 1 + U')) x base / 1.4 with g(x) = ${exponent}^x x tanh(sqrt(4x)): ` +
    `mean waits ${theirs} before the cap; ours is AWS's, min(cap, U(base, 3 x previous)), mean waits ${ours}: longer at first, ` +
    `then growing 1.5x a retry instead of ${exponent}x`
  );
}

/** A JSON format's own parts; jsonFormat adds the parsing, reading and writing they share. */
export interface JsonFormatParts extends EditableFormat {
  readonly name: string;
  readonly title: string;
  readonly source: string;
  /** What the file is, for a syntax error: `p-retry options`. */
  readonly what: string;
  /** Whether parsed JSON is this format's. */
  readonly recognizes: (root: Json) => boolean;
  /** How many policies the file has; a ConfigFileError when it has none of this format. */
  readonly policyCount: (root: Json) => number;
  readonly knobs: readonly CheckFlag[];
}

export function jsonFormat(parts: JsonFormatParts): ConfigFormat {
  const parsed = (text: string) => parseJson(text, parts.what);
  return {
    name: parts.name,
    title: parts.title,
    source: parts.source,
    recognizes: (text) => {
      try {
        return parts.recognizes(parsed(text));
      } catch (error) {
        if (error instanceof ConfigFileError) return false;
        throw error;
      }
    },
    read: (text) => {
      const root = parsed(text);
      return { policies: Array.from({ length: parts.policyCount(root) }, (_, index) => parts.interpret(root, index)) };
    },
    write: (text, policyIndex, target) => writeTarget(parts, text, parsed(text), policyIndex, target),
    knobs: parts.knobs,
  };
}

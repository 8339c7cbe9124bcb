/**
 * Fault schedules: what goes wrong, when, for how long, and how badly. One text form,
 * `kind@start+length`, with `*factor` for the kinds that have one, several separated by
 * commas: `stop@15s+20s, spike@60s+5s*2`.
 *
 * The kinds (stop, crash, capacity, slow, errors, spike), what each does and how it is played,
 * are defined one per file in ./kinds/ and listed in ./kinds.ts.
 *
 * In a chain of tiers (docs/tiers.md) a fault names its tier first: `db:stop@15s+20s`,
 * `api:slow@10s+30s*4`. No prefix is the edge, tier 0, so a schedule without tiers means
 * what it always meant.
 *
 * Pure: durations are read by the parser given (the command line's Go durations).
 */
import { FAULT_KINDS, type FaultKind, faultKind, isFaultKind } from "./kinds.ts";

export { FAULT_KINDS, type FaultKind } from "./kinds.ts";

export interface Fault {
  readonly kind: FaultKind;
  readonly atMs: number;
  readonly durationMs: number;
  /** The kind's factor (capacity, slow, spike) or share (errors); 1 for stop and crash. */
  readonly factor: number;
  /** The tier it strikes, by name (`db:` in the schedule); undefined for the edge, tier 0. */
  readonly tier?: string | undefined;
}

/** What a tier's name may be: a prefix of a fault, a key of the output. */
export const TIER_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;

/** A schedule that cannot be read: the message names the part and the rule. */
export class FaultSyntaxError extends Error {
  override readonly name = "FaultSyntaxError";
}

const FAULT_PATTERN = /^(?:([^:@]*):)?([a-z]+)@([^+*]+)\+([^*]+)(?:\*(.+))?$/;

/**
 * The most faults a schedule lists. A schedule is a handful; each change of faults combines those
 * on at that instant (conditionsOf), so a thousand overlapping faults cost about a million steps.
 */
export const MAX_FAULTS = 1000;

/** What a schedule of more than MAX_FAULTS is told. */
export const TOO_MANY_FAULTS = `more than ${MAX_FAULTS} faults; a schedule lists at most ${MAX_FAULTS}`;

/** Reads a schedule; `parseDurationMs` reads a duration or throws. Faults come back in order of start. */
export function parseFaults(text: string, parseDurationMs: (text: string) => number): Fault[] {
  const parts = text
    .split(",")
    .map((part) => part.replace(/\s+/g, ""))
    .filter((part) => part !== "");
  if (parts.length === 0) throw new FaultSyntaxError("must list at least one fault, e.g. stop@15s+20s");
  if (parts.length > MAX_FAULTS) throw new FaultSyntaxError(TOO_MANY_FAULTS);
  const faults = parts.map((part) => parseFault(part, parseDurationMs));
  return faults.sort((a, b) => a.atMs - b.atMs);
}

function parseFault(part: string, parseDurationMs: (text: string) => number): Fault {
  const match = FAULT_PATTERN.exec(part);
  if (match === null) throw new FaultSyntaxError(`"${part}" is not kind@start+length[*factor], e.g. stop@15s+20s`);
  const [, tier, kindText, startText, lengthText, factorText] = match;
  if (tier !== undefined && !TIER_NAME_PATTERN.test(tier)) {
    throw new FaultSyntaxError(`"${part}": the tier "${tier}" is not a name of lower-case letters, digits, - and _`);
  }
  const where = tier === undefined ? {} : { tier };
  if (!isFaultKind(kindText!)) {
    throw new FaultSyntaxError(`"${part}": unknown fault ${kindText}; one of ${FAULT_KINDS.join(", ")}`);
  }
  const kind = kindText;
  const duration = (text: string, what: string) => {
    let value: number;
    try {
      value = parseDurationMs(text);
    } catch {
      throw new FaultSyntaxError(`"${part}": the ${what} "${text}" is not a duration such as 15s or 1m30s`);
    }
    if (!(value >= 0)) throw new FaultSyntaxError(`"${part}": the ${what} must not be negative`);
    return value;
  };
  const atMs = duration(startText!, "start");
  const durationMs = duration(lengthText!, "length");
  if (durationMs <= 0) throw new FaultSyntaxError(`"${part}": the length must be above 0`);
  if (faultKind(kind).factor === undefined) {
    if (factorText !== undefined) throw new FaultSyntaxError(`"${part}": ${kind} takes no factor`);
    return { kind, atMs, durationMs, factor: 1, ...where };
  }
  const factor = factorText === undefined ? Number.NaN : Number(factorText);
  const problem = factorProblem(kind, factor);
  if (problem !== undefined) throw new FaultSyntaxError(`"${part}": ${problem}`);
  return { kind, atMs, durationMs, factor, ...where };
}

/** What is wrong with `factor` for a kind that takes one (e.g. "capacity needs a factor above 0, …"), or undefined. */
export function factorProblem(kind: FaultKind, factor: number): string | undefined {
  const rule = faultKind(kind).factor;
  if (rule === undefined) return `${kind} takes no factor`;
  return Number.isFinite(factor) && rule.check(factor) ? undefined : `${kind} needs ${rule.rule}`;
}

/** A fault as the schedule writes it, e.g. `spike@1m+5s*2` (with the given duration format). */
export function formatFault(fault: Fault, formatDurationMs: (ms: number) => string): string {
  const factor = faultKind(fault.kind).factor === undefined ? "" : `*${fault.factor}`;
  const tier = fault.tier === undefined ? "" : `${fault.tier}:`;
  return `${tier}${fault.kind}@${formatDurationMs(fault.atMs)}+${formatDurationMs(fault.durationMs)}${factor}`;
}

/** A fault as a chart's band names it: stop, crash, capacity ×0.5, slow ×3, errors 20 %, spike ×2. */
export function faultLabel(fault: Fault): string {
  const tier = fault.tier === undefined ? "" : `${fault.tier}: `;
  const factor = faultKind(fault.kind).factor;
  return `${tier}${fault.kind}${factor === undefined ? "" : ` ${factor.label(fault.factor)}`}`;
}

/** A fault named by its kind and its bare factor, as the dashboard and ./sim's outage search name it: slow ×3, errors ×0.5, crash. */
export function faultName(fault: Pick<Fault, "kind" | "factor">): string {
  return `${fault.kind}${faultKind(fault.kind).factor === undefined ? "" : ` ×${fault.factor}`}`;
}

/**
 * The faults that strike one tier of a chain: those that name it, and for the edge (tier 0)
 * also those that name none. A schedule is checked against the chain's names first (tierProblem).
 */
export function faultsOfTier(faults: readonly Fault[], name: string, isEdge: boolean): Fault[] {
  return faults.filter((fault) => fault.tier === name || (isEdge && fault.tier === undefined));
}

/**
 * A spike whose load would pass the programs' limit: a spike × f offers f times the herd's load,
 * its `amount` of `unit` (closed users, or an open loop's arrivals per second). A factor that
 * overflows (×1e308) is past any limit.
 */
export function spikeLoadProblem(
  faults: readonly Fault[],
  load: { readonly amount: number; readonly limit: number; readonly unit: string },
  formatDurationMs: (ms: number) => string,
): string | undefined {
  const spike = faults.find((fault) => faultKind(fault.kind).mechanism === "load" && !(load.amount * fault.factor <= load.limit));
  if (spike === undefined) return undefined;
  return (
    `the spike ${formatFault(spike, formatDurationMs)} runs ${spike.factor} times the ${load.amount} ${load.unit}; ` +
    `at most ${load.limit} ${load.unit} in all`
  );
}

/** A fault that names a tier the chain does not have (or any tier, with no chain): the message says which; undefined when none. */
export function tierProblem(faults: readonly Fault[], names: readonly string[]): string | undefined {
  const stray = faults.find((fault) => fault.tier !== undefined && !names.includes(fault.tier));
  if (stray === undefined) return undefined;
  return names.length === 0
    ? `the fault ${stray.tier}:${stray.kind} names a tier, but there is no chain of tiers (a scenario file's tiers:)`
    : `the fault ${stray.tier}:${stray.kind} names no tier of the chain (${names.join(", ")})`;
}

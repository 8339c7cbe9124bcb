import { formatDuration, parseDuration } from "../cli/duration.ts";
import type { FlagSpec } from "../cli/flags.ts";
import { type FlagSettings, formatFlagValue } from "../recommend/settings.ts";
import { BREAKER_KINDS, BUDGET_KINDS, MECHANISMS, PROTECTION_FLAGS } from "../strategies/protection.ts";
import { STRATEGIES } from "../strategies/registry.ts";
import type { CheckFlag } from "./format.ts";

/*
 * The one-field changes check tries around a user's policy: each knob its format can write,
 * moved the way that changes a retry storm (fewer or more attempts, longer first and last
 * waits, jitter, a budget or a breaker switched on, a protection's parameter halved or
 * doubled). The format decides which of them it can say; check simulates what the changed file
 * then means, so a change here is only a proposal.
 */

/** One proposal: the user's settings with one thing changed, and that thing in words. */
export interface Neighbour {
  readonly change: string;
  readonly target: FlagSettings;
}

/** Attempts per request tried where the user's differ: no more than two retries is AWS's and Polly's default. */
const ATTEMPTS_TRIED = [2, 3, 5];
/** The first and the last wait, tried twice and ten times as long. */
const WAIT_FACTORS = [2, 10];
const FACTORS_TRIED = ["2", "3"];
const JITTERS_TRIED = ["0.2", "0.5"];
/** A parameter below its published value by this factor is a stand-in for none of it. */
const STAND_IN_SHARE = 1000;
/** A protection's parameters, halved and doubled (as choose varies them). */
const PARAMETER_FACTORS = [0.5, 2];

const MS_FLAGS = new Set(["min-delay", "max-delay", "timeout", "simple-backoff-delay", "budget-ttl", "breaker-window", "breaker-break"]);

/** A value scaled, in its flag's own spelling: a duration stays a duration, an integer an integer. */
function scaled(flag: string, text: string, factor: number): string | undefined {
  if (MS_FLAGS.has(flag)) {
    const ms = parseDuration(text);
    return ms > 0 && Number.isFinite(ms) ? formatDuration(Math.round(ms * factor)) : undefined;
  }
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value)) return undefined;
  const next = Number.isInteger(value) && factor >= 1 ? value * factor : Number((value * factor).toPrecision(6));
  return Number.isInteger(value) ? String(Math.max(1, Math.round(next))) : String(next);
}

/** The parameters a strategy reads (from its registry entry): a change to one of the others would mean nothing. */
function strategyReads(strategy: string | undefined): ReadonlySet<string> {
  const definition = STRATEGIES.find((entry) => entry.name === strategy);
  return new Set(Object.keys(definition?.parameters ?? {}));
}

function change(settings: FlagSettings, flag: string, value: string | undefined, words: string): Neighbour | undefined {
  if (value === undefined || settings[flag] === value) return undefined;
  return { change: words, target: { ...settings, [flag]: value } };
}

function attemptsNeighbours(settings: FlagSettings): Neighbour[] {
  const current = Number(settings["max-attempts"] ?? 0);
  return ATTEMPTS_TRIED.filter((attempts) => attempts !== current).map((attempts) => ({
    change: `at most ${attempts} attempts (was ${current === 0 ? "no limit" : current})`,
    target: { ...settings, "max-attempts": String(attempts) },
  }));
}

function waitNeighbours(
  settings: FlagSettings,
  flag: "simple-backoff-delay" | "min-delay" | "max-delay" | "timeout",
  words: string,
): Neighbour[] {
  const current = settings[flag];
  if (current === undefined) return [];
  const factors = flag === "timeout" ? [0.5, 2] : WAIT_FACTORS;
  return factors.flatMap((factor) => {
    const value = scaled(flag, current, factor);
    const next = change(settings, flag, value, `${words} ${value} (was ${current})`);
    return next === undefined ? [] : [next];
  });
}

function listed(settings: FlagSettings, flag: string, values: readonly string[], words: string): Neighbour[] {
  return values.flatMap((value) => {
    const next = change(settings, flag, value, `${words} ${value} (was ${settings[flag] ?? "none"})`);
    return next === undefined ? [] : [next];
  });
}

/** A mechanism switched on with its published parameters, or, when on, each of its parameters halved and doubled. */
function mechanismNeighbours(settings: FlagSettings, flag: "budget" | "breaker", kinds: readonly string[]): Neighbour[] {
  const current = settings[flag];
  if (current === undefined) {
    return kinds.map((kind) => ({
      change: `add ${flag === "budget" ? "a retry budget" : "a circuit breaker"} (-${flag} ${kind})`,
      target: { ...settings, [flag]: kind },
    }));
  }
  const mechanism = MECHANISMS.find((entry) => entry.flag === flag && entry.choice === current);
  const reads: readonly string[] = mechanism?.reads ?? [];
  return reads.flatMap((parameter) => {
    const published = defaultOf(parameter);
    const value = settings[parameter] ?? published;
    if (value === undefined) return [];
    // A value a thousandth of the published one stands for none (Envoy's max_retries alone reads as a budget with no share):
    // halving it says nothing; the published value is the change worth trying.
    if (published !== undefined && Number(value) < Number(published) / STAND_IN_SHARE) {
      const next = change(settings, parameter, published, `-${parameter} ${published}, its published value (was ${value})`);
      return next === undefined ? [] : [next];
    }
    return PARAMETER_FACTORS.flatMap((factor) => {
      const next = change(
        settings,
        parameter,
        scaled(parameter, value, factor),
        `-${parameter} ${scaled(parameter, value, factor)} (was ${value})`,
      );
      return next === undefined ? [] : [next];
    });
  });
}

/** A protection parameter's published default, as the flag table spells it. */
function defaultOf(parameter: string): string | undefined {
  const spec: FlagSpec | undefined = (PROTECTION_FLAGS as readonly FlagSpec[]).find((flag) => flag.name === parameter);
  return spec?.default === undefined ? undefined : formatFlagValue(spec, spec.default);
}

/** Every one-field change of `settings` along the format's knobs. */
export function neighbourTargets(settings: FlagSettings, knobs: readonly CheckFlag[]): Neighbour[] {
  const reads = strategyReads(settings.strategy);
  const has = (knob: CheckFlag) => knobs.includes(knob);
  const all: Neighbour[] = [
    ...(has("max-attempts") ? attemptsNeighbours(settings) : []),
    ...(has("simple-backoff-delay") && reads.has("simple-backoff-delay") ? waitNeighbours(settings, "simple-backoff-delay", "wait") : []),
    ...(has("min-delay") && reads.has("min-delay") ? waitNeighbours(settings, "min-delay", "first wait") : []),
    ...(has("max-delay") && reads.has("max-delay") ? waitNeighbours(settings, "max-delay", "longest wait") : []),
    ...(has("backoff-factor") && reads.has("backoff-factor") ? listed(settings, "backoff-factor", FACTORS_TRIED, "growth per retry") : []),
    ...(has("jitter") && reads.has("jitter") && Number(settings.jitter ?? 0) < 0.2
      ? listed(settings, "jitter", JITTERS_TRIED, "jitter")
      : []),
    ...(has("timeout") ? waitNeighbours(settings, "timeout", "per-try timeout") : []),
    ...(has("budget") ? mechanismNeighbours(settings, "budget", BUDGET_KINDS) : []),
    ...(has("breaker") ? mechanismNeighbours(settings, "breaker", BREAKER_KINDS) : []),
  ];
  const seen = new Set<string>();
  return all.filter((neighbour) => {
    const key = settingsKey(neighbour.target);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Settings as one comparable string, whatever order their flags were set in. */
export function settingsKey(settings: FlagSettings): string {
  return JSON.stringify(Object.entries(settings).sort(([a], [b]) => a.localeCompare(b)));
}

import { formatDuration, parseDuration } from "../cli/duration.ts";
import type { FlagSpec } from "../cli/flags.ts";
import { concurrencyForDelay, type LatencyModel } from "../model/latency.ts";
import type { FlagSettings } from "./settings.ts";

/*
 * The grid: every strategy and preset of the registry, a few parameter variants of each, the
 * client-side mechanisms the simulator's flags offer (with variants of their parameters),
 * and, with -server-side, the server levers. All of it is read from data (the registry and
 * the flag table), so a strategy, preset or mechanism added there joins the grid by itself;
 * where one does not exist yet, the grid is simply smaller.
 */

export type CandidateOrigin = "baseline" | "strategy" | "variant" | "preset" | "mechanism" | "pair";

export interface Candidate {
  /** Unique, stable, usable with -candidates: `full-jitter`, `full-jitter:max-attempts=3`, `fixed@cancel-on-disconnect`. */
  readonly id: string;
  /** The strategy or preset it starts from. */
  readonly family: string;
  readonly origin: CandidateOrigin;
  readonly summary: string;
  /** Client-side flags it sets. */
  readonly client: FlagSettings;
  /** Server-side flags it sets (only with -server-side). */
  readonly server: FlagSettings;
  /** The server lever's id: "default" for the user's own server settings. */
  readonly lever: string;
  /** The id of its client half (itself unless it is a pair). */
  readonly clientId: string;
}

/** What the grid reads of the strategy registry. */
export interface RegistryView {
  readonly strategies: readonly { readonly name: string; readonly parameters: Readonly<Record<string, string>> }[];
  readonly presets: readonly { readonly name: string; readonly summary: string; readonly client: FlagSettings }[];
}

export const NO_RETRIES = "no-retries";
export const FIXED = "fixed";

/** Client-side mechanisms: a flag that switches one on (a boolean or a choice) and how its parameters are named. */
const MECHANISMS: readonly { readonly flag: string; readonly parameters: (name: string) => boolean }[] = [
  { flag: "retry-budget", parameters: (name) => name === "budget-tokens" || name === "budget-ratio" },
  { flag: "budget", parameters: (name) => name.startsWith("budget-") && name !== "budget-tokens" && name !== "budget-ratio" },
  { flag: "throttle", parameters: (name) => name.startsWith("throttle-") },
  { flag: "breaker", parameters: (name) => name.startsWith("breaker-") },
];

/** Strategies a mechanism is tried with: the worst (fixed) and AWS's recommendation (full jitter). */
const MECHANISM_BASES = [FIXED, "full-jitter"];

/** A cap on attempts as widely used defaults have it (AWS SDKs' standard mode: 3). */
const MAX_ATTEMPTS_VARIANT = 3;

/** Parameters whose default is the first wait: tried ten times longer. */
const FIRST_WAIT_PARAMETERS = ["simple-backoff-delay", "min-delay"];
const FIRST_WAIT_FACTOR = 10;
/** Strategies whose first wait grows from the user's think time: -min-delay does not change it. */
const FIRST_WAIT_FROM_THINK_TIME = new Set(["exponential-backoff"]);

/** Choices of a mechanism flag that mean "off". */
const OFF = new Set(["", "off", "none", "false", "0"]);

function candidate(
  id: string,
  family: string,
  origin: CandidateOrigin,
  summary: string,
  client: FlagSettings,
  server: FlagSettings = {},
  lever = "default",
  clientId = id,
): Candidate {
  return { id, family, origin, summary, client, server, lever, clientId };
}

/** The two baselines that always run: no retries at all, and the article's fixed retry. */
export function baselines(): Candidate[] {
  return [
    candidate(NO_RETRIES, FIXED, "baseline", "no retries at all: one attempt per request (-max-attempts 1)", {
      strategy: FIXED,
      "max-attempts": "1",
    }),
    candidate(FIXED, FIXED, "baseline", "the reference client's fixed retry: every 100 ms, no limit", { strategy: FIXED }),
  ];
}

/**
 * Every client-side candidate: the baselines, each strategy with its defaults, capped at
 * three attempts and with a ten times longer first wait, each preset, and each mechanism
 * on fixed retry and full jitter with its parameters halved and doubled. Flags that the
 * simulator does not have are skipped; combinations it rejects are dropped later.
 */
export function clientGrid(registry: RegistryView, flags: ReadonlyMap<string, FlagSpec>): Candidate[] {
  const grid: Candidate[] = baselines();
  const strategyNames = new Set(registry.strategies.map((strategy) => strategy.name));
  for (const strategy of registry.strategies) {
    const name = strategy.name;
    if (name !== FIXED) grid.push(candidate(name, name, "strategy", `${name} with its defaults`, { strategy: name }));
    if (flags.has("max-attempts")) {
      grid.push(
        candidate(
          `${name}:max-attempts=${MAX_ATTEMPTS_VARIANT}`,
          name,
          "variant",
          `${name}, at most ${MAX_ATTEMPTS_VARIANT} attempts per request`,
          {
            strategy: name,
            "max-attempts": String(MAX_ATTEMPTS_VARIANT),
          },
        ),
      );
    }
    for (const parameter of FIRST_WAIT_FROM_THINK_TIME.has(name) ? [] : FIRST_WAIT_PARAMETERS) {
      const text = strategy.parameters[parameter];
      const spec = flags.get(parameter);
      if (text === undefined || spec?.kind !== "duration") continue;
      const defaultMs = parseDuration(text);
      if (!(defaultMs > 0)) continue;
      const value = formatDuration(defaultMs * FIRST_WAIT_FACTOR);
      grid.push(
        candidate(`${name}:${parameter}=${value}`, name, "variant", `${name}, first wait ${value} instead of ${text}`, {
          strategy: name,
          [parameter]: value,
        }),
      );
    }
  }
  for (const preset of registry.presets) {
    grid.push(candidate(preset.name, preset.name, "preset", preset.summary, preset.client));
  }
  const bases = MECHANISM_BASES.filter((base) => strategyNames.has(base));
  for (const mechanism of MECHANISMS) {
    const spec = flags.get(mechanism.flag);
    if (spec === undefined) continue;
    const choices =
      spec.kind === "boolean" ? ["true"] : spec.kind === "string" ? (spec.choices ?? []).filter((choice) => !OFF.has(choice)) : [];
    const parameters = [...flags.values()].filter((flag) => mechanism.parameters(flag.name));
    for (const choice of choices) {
      const label = choice === "true" ? mechanism.flag : `${mechanism.flag}=${choice}`;
      for (const base of bases) {
        grid.push(candidate(`${base}:${label}`, base, "mechanism", `${base} with -${label}`, { strategy: base, [mechanism.flag]: choice }));
      }
      const base = bases.at(-1);
      if (base === undefined) continue;
      for (const parameter of parameters) {
        for (const value of parameterVariants(parameter)) {
          grid.push(
            candidate(
              `${base}:${label}:${parameter.name}=${value}`,
              base,
              "mechanism",
              `${base} with -${label} -${parameter.name} ${value}`,
              {
                strategy: base,
                [mechanism.flag]: choice,
                [parameter.name]: value,
              },
            ),
          );
        }
      }
    }
  }
  return dedupe(grid);
}

/** A numeric parameter halved and doubled, within its flag's range; nothing for a parameter without a default. */
export function parameterVariants(spec: FlagSpec): string[] {
  if (spec.kind !== "number" && spec.kind !== "integer" && spec.kind !== "duration") return [];
  const base = spec.default;
  if (base === undefined || !(base > 0) || !Number.isFinite(base)) return [];
  const min = spec.kind === "duration" ? spec.minMs : spec.min;
  const max = spec.kind === "duration" ? undefined : spec.max;
  const minExclusive = spec.kind === "integer" ? false : (spec.minExclusive ?? false);
  const values: string[] = [];
  for (const factor of [0.5, 2]) {
    let value: number = base * factor;
    if (spec.kind === "integer") value = Math.round(value);
    if (min !== undefined && (minExclusive ? value <= min : value < min)) continue;
    if (max !== undefined && value > max) value = max;
    if (value === base) continue;
    const text = spec.kind === "duration" ? formatDuration(value) : String(Number(value.toPrecision(6)));
    if (!values.includes(text)) values.push(text);
  }
  return values;
}

function dedupe(grid: readonly Candidate[]): Candidate[] {
  const seen = new Set<string>();
  return grid.filter((entry) => {
    const key = JSON.stringify([entry.client, entry.server]);
    if (seen.has(entry.id) || seen.has(key)) return false;
    seen.add(entry.id);
    seen.add(key);
    return true;
  });
}

/** A server setting to pair with client policies. */
export interface ServerLever {
  readonly id: string;
  readonly summary: string;
  readonly server: FlagSettings;
  /** Client flags the lever needs (e.g. propagating deadlines for a deadline-aware server). */
  readonly client: FlagSettings;
}

/**
 * The server levers the simulator offers, read from its flags: a short listen backlog,
 * dropping abandoned work, load shedding (with a Retry-After when the server can send one),
 * deadline-aware admission. Load shedding starts before the delay reaches half the client
 * timeout, a point derived from the user's own latency model.
 */
export function serverLevers(flags: ReadonlyMap<string, FlagSpec>, latency: LatencyModel, timeoutMs: number): ServerLever[] {
  const levers: ServerLever[] = [{ id: "default", summary: "your server as it is", server: {}, client: {} }];
  if (flags.has("backlog")) {
    levers.push({
      id: "backlog=128",
      summary: "a listen backlog of 128: fewer stale requests queue while stopped",
      server: { backlog: "128" },
      client: {},
    });
  }
  if (flags.has("cancel-on-disconnect")) {
    levers.push({
      id: "cancel-on-disconnect",
      summary: "drop a request from service when its client goes away",
      server: { "cancel-on-disconnect": "true" },
      client: {},
    });
  }
  if (flags.has("max-concurrency")) {
    const tipping = concurrencyForDelay(latency, timeoutMs / 2);
    // The most in service whose delay stays below half the timeout (a model whose delay never
    // grows has no such point: ten times its limit then).
    const shedAt = Number.isFinite(tipping) ? Math.max(latency.limit + 1, tipping - 1) : Math.max(1, latency.limit * 10);
    levers.push({
      id: `shed=${shedAt}`,
      summary: `load shedding: 503 at once above ${shedAt} in service (the delay stays below half the timeout)`,
      server: { "max-concurrency": String(shedAt) },
      client: {},
    });
    if (flags.has("retry-after")) {
      levers.push({
        id: `shed=${shedAt}+retry-after=1s`,
        summary: `load shedding above ${shedAt} in service, with Retry-After: 1s`,
        server: { "max-concurrency": String(shedAt), "retry-after": "1s" },
        client: {},
      });
    }
  }
  if (flags.has("deadline-aware")) {
    levers.push({
      id: "deadline-aware",
      summary: "the server drops requests whose deadline has passed",
      server: { "deadline-aware": "true" },
      client: flags.has("propagate-deadline") ? { "propagate-deadline": "true" } : {},
    });
  }
  return levers;
}

/** A client policy with a server lever. */
export function pair(client: Candidate, lever: ServerLever): Candidate {
  if (lever.id === "default") return client;
  return candidate(
    `${client.clientId}@${lever.id}`,
    client.family,
    "pair",
    `${client.summary}; server: ${lever.summary}`,
    { ...client.client, ...lever.client },
    { ...client.server, ...lever.server },
    lever.id,
    client.clientId,
  );
}

/** Whether a candidate is selected by a -candidates list (exact ids, or prefixes ending in *). */
export function selectedBy(filter: readonly string[] | undefined, entry: Candidate): boolean {
  if (filter === undefined || entry.origin === "baseline") return true;
  return filter.some((pattern) => (pattern.endsWith("*") ? entry.id.startsWith(pattern.slice(0, -1)) : entry.id === pattern));
}

import { formatDuration, parseDuration } from "../cli/duration.ts";
import type { FlagSpec } from "../cli/flags.ts";
import type { LatencyModel } from "../model/latency.ts";
import type { LoadShedding } from "../model/servers/kind.ts";
import { modelOf, type ServerModelSpec } from "../model/servers/models.ts";
import { SIMULATION_FLAGS } from "../config/simulation.ts";
import { PRESETS, presetSettings } from "../strategies/presets.ts";
import { MECHANISMS, PROTECTION_FLAGS } from "../strategies/protection.ts";
import { STRATEGIES } from "../strategies/registry.ts";
import type { FlagSettings } from "./settings.ts";

/*
 * The grid: every strategy and preset of the registry, a few parameter variants of each, the
 * fleet-level mechanisms (with variants of their parameters), and, with -server-side, the
 * server levers. All of it is read from the registry (src/strategies: strategies, presets,
 * protections), so a strategy, preset or mechanism added there joins the grid by itself.
 */

export type CandidateOrigin = "baseline" | "strategy" | "variant" | "preset" | "mechanism" | "pair" | "configuration";

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

export const NO_RETRIES = "no-retries";
export const FIXED = "fixed";

/**
 * The mechanisms tried on the bases: each of the registry's, and the parameters varied with
 * it. -retry-budget is -budget grpc: gRPC's parameters are varied under it, as its candidates'
 * ids have always said, and not again under -budget grpc.
 */
const GRPC_BUDGET = MECHANISMS.find((mechanism) => mechanism.flag === "budget" && mechanism.choice === "grpc")!;
const MECHANISM_TRIALS: readonly { readonly flag: string; readonly choice: string; readonly parameters: readonly string[] }[] = [
  { flag: "retry-budget", choice: "true", parameters: GRPC_BUDGET.reads },
  ...MECHANISMS.map((mechanism) => ({
    flag: mechanism.flag,
    choice: mechanism.choice,
    parameters: mechanism === GRPC_BUDGET ? [] : mechanism.reads,
  })),
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
 * on fixed retry and full jitter, and on full jitter with each parameter it reads halved
 * and doubled. Combinations the simulator rejects are dropped later.
 */
export function clientGrid(): Candidate[] {
  const grid: Candidate[] = baselines();
  for (const strategy of STRATEGIES) {
    const name = strategy.name;
    const parameters: Readonly<Record<string, string>> = strategy.parameters;
    if (name !== FIXED) grid.push(candidate(name, name, "strategy", `${name} with its defaults`, { strategy: name }));
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
    for (const parameter of FIRST_WAIT_FROM_THINK_TIME.has(name) ? [] : FIRST_WAIT_PARAMETERS) {
      const text = parameters[parameter];
      if (text === undefined) continue;
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
  for (const preset of PRESETS) {
    grid.push(candidate(preset.name, preset.name, "preset", preset.summary, presetSettings(preset, SIMULATION_FLAGS)));
  }
  for (const mechanism of MECHANISM_TRIALS) {
    const label = mechanism.choice === "true" ? mechanism.flag : `${mechanism.flag}=${mechanism.choice}`;
    const switchOn = { [mechanism.flag]: mechanism.choice };
    for (const base of MECHANISM_BASES) {
      grid.push(candidate(`${base}:${label}`, base, "mechanism", `${base} with -${label}`, { strategy: base, ...switchOn }));
    }
    const base = MECHANISM_BASES.at(-1)!;
    for (const parameter of PROTECTION_FLAGS.filter((flag) => mechanism.parameters.includes(flag.name))) {
      for (const value of parameterVariants(parameter)) {
        grid.push(
          candidate(
            `${base}:${label}:${parameter.name}=${value}`,
            base,
            "mechanism",
            `${base} with -${label} -${parameter.name} ${value}`,
            {
              strategy: base,
              ...switchOn,
              [parameter.name]: value,
            },
          ),
        );
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

/**
 * Where a model sheds load so that an answer comes within half the client timeout: for a
 * shared delay, above the most in service whose delay stays below it (a model whose delay
 * never grows has no such point: ten times its limit then); for a thread pool, beyond the
 * waiting requests its threads serve in that time.
 */
function sheddingOf(model: ServerModelSpec, timeoutMs: number): LoadShedding {
  return modelOf(model).shedding(model, timeoutMs);
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
 * The server levers: a short listen backlog, dropping abandoned work, load shedding (with
 * and without a Retry-After), deadline-aware admission. Load shedding starts before the
 * delay reaches half the client timeout, a point derived from the user's own latency model.
 */
export function serverLevers(latency: LatencyModel, timeoutMs: number, model?: ServerModelSpec): ServerLever[] {
  const shedding = sheddingOf(model ?? { kind: "exponential", latency }, timeoutMs);
  return [
    { id: "default", summary: "your server as it is", server: {}, client: {} },
    {
      id: "backlog=128",
      summary: "a listen backlog of 128: fewer stale requests queue while stopped",
      server: { backlog: "128" },
      client: {},
    },
    {
      id: "cancel-on-disconnect",
      summary: "drop a request from service when its client goes away",
      server: { "cancel-on-disconnect": "true" },
      client: {},
    },
    {
      id: `shed=${shedding.at}`,
      summary: `load shedding: 503 at once above ${shedding.at} ${shedding.where}`,
      server: { [shedding.flag]: String(shedding.at) },
      client: {},
    },
    {
      id: `shed=${shedding.at}+retry-after=1s`,
      summary: `load shedding above ${shedding.at} ${shedding.where.replace(/ \(.*\)$/, "")}, with Retry-After: 1s`,
      server: { [shedding.flag]: String(shedding.at), "retry-after": "1s" },
      client: {},
    },
    {
      id: "deadline-aware",
      summary: "the server drops requests whose deadline has passed",
      server: { "deadline-aware": "true" },
      client: { "propagate-deadline": "true" },
    },
  ];
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

import { flagsInGroups, flagsNamed, type FlagSpec, type FlagValues } from "../cli/flags.ts";
import { formatDuration } from "../cli/duration.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { RetryConfig } from "../model/client-loop.ts";
import type { Arrivals } from "../model/load.ts";
import { describeProtection, PROTECTION_FLAGS, resolveProtection } from "../strategies/protection.ts";
import {
  buildStrategyPolicy,
  findStrategy,
  STRATEGY_CHOICES,
  STRATEGY_NAMES,
  STRATEGY_PARAMETER_FLAGS,
  type StrategyName,
} from "../strategies/registry.ts";
import { checkHedging, HEDGE_DELAY_FLAG } from "./hedge-flag.ts";
import { LOAD_FLAGS } from "./load-flags.ts";

/*
 * The load: the users, how they arrive, the retry policy each follows and the reporting window.
 * One typed value (LoadConfig) that ./client, the simulator, the demo's tiers and a middle
 * tier's calls all read from the same flags, so that no program reads another program's options.
 */

/** The users and their patience: the reference client's first four flags. */
export const USERS_FLAGS = [
  {
    name: "clients",
    group: "system",
    kind: "integer",
    default: 1000,
    min: 1,
    placeholder: "n",
    description: "number of simulated clients",
  },
  {
    name: "lambda",
    group: "system",
    kind: "number",
    default: 10,
    min: 0,
    minExclusive: true,
    placeholder: "seconds",
    description: "mean seconds between one client's requests (exponentially distributed)",
  },
  {
    name: "timeout",
    group: "system",
    kind: "duration",
    default: 2000,
    minMs: 0,
    minExclusive: true,
    description: "timeout on an HTTP request: abort it and its connection",
  },
  {
    name: "exponential-backoff",
    group: "strategy",
    kind: "boolean",
    default: false,
    description: "retry with the reference program's exponential backoff (same as -strategy exponential-backoff)",
  },
] as const satisfies readonly FlagSpec[];

/** The retry policy, its protections, how load is offered, and the reporting window. */
export const POLICY_AND_LOAD_FLAGS = [
  {
    name: "strategy",
    group: "strategy",
    kind: "string",
    default: "fixed",
    choices: STRATEGY_CHOICES,
    placeholder: "name",
    description: `retry strategy: ${STRATEGY_NAMES.join(", ")} (-h lists each with its parameters)`,
  },
  ...STRATEGY_PARAMETER_FLAGS,
  {
    name: "max-attempts",
    group: "strategy",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "n",
    description: "attempts per request including the first, then give up (0 = no limit)",
  },
  HEDGE_DELAY_FLAG,
  ...PROTECTION_FLAGS,
  ...LOAD_FLAGS,
  {
    name: "interval",
    group: "observation",
    kind: "duration",
    default: 5000,
    minMs: 0,
    minExclusive: true,
    description: "reporting window",
  },
] as const satisfies readonly FlagSpec[];

/** Every flag of the load, in ./client's order. */
export const LOAD_CONFIG_FLAGS = [...USERS_FLAGS, ...POLICY_AND_LOAD_FLAGS];

export type LoadFlagValues = FlagValues<typeof LOAD_CONFIG_FLAGS>;

/** The load the users make: how many, how they arrive, their retry policy, and the reporting window. */
export interface LoadConfig extends RetryPolicyOptions {
  readonly clients: number;
  readonly arrivals: Arrivals;
  readonly intervalMs: number;
}

/** The load the flags describe; a UsageError for a combination that means nothing. */
export function resolveLoadConfig(values: LoadFlagValues): LoadConfig {
  return { clients: values.clients, arrivals: resolveArrivals(values), ...resolveRetryPolicy(values), intervalMs: values.interval };
}

/**
 * The client's flags that make up one caller's retry policy: the strategy and its attempts,
 * the per-attempt timeout, the protections (budget, throttle, breaker), the deadline it
 * sends and the Retry-After it honours. A middle tier (./server -upstream) takes them under
 * the prefix upstream-; the client instances are the calling process, so -instances is not among them.
 */
export const RETRY_POLICY_FLAGS = [
  ...flagsInGroups(LOAD_CONFIG_FLAGS, ["strategy", "protection"]),
  ...flagsNamed(LOAD_CONFIG_FLAGS, ["timeout", "honor-retry-after"]),
];

export type RetryPolicyValues = FlagValues<typeof RETRY_POLICY_FLAGS> & Pick<LoadFlagValues, "lambda" | "instances">;

/** One caller's retry policy, as its flags set it. */
export interface RetryPolicyOptions {
  readonly strategy: StrategyName;
  readonly timeoutMs: number;
  /** Send each attempt's deadline to the server. */
  readonly propagateDeadline: boolean;
  readonly retry: RetryConfig;
}

/** The retry policy the flags describe; a UsageError for a combination that means nothing. */
export function resolveRetryPolicy(values: RetryPolicyValues): RetryPolicyOptions {
  let strategy = findStrategy(values.strategy)!.name as StrategyName;
  if (values["exponential-backoff"]) {
    if (strategy !== "fixed" && strategy !== "exponential-backoff") {
      throw new UsageError(`-exponential-backoff selects -strategy exponential-backoff; it cannot be combined with -strategy ${strategy}`);
    }
    strategy = "exponential-backoff";
  }
  const retry: RetryConfig = {
    backoff: buildStrategyPolicy(strategy, values),
    thinkTimeMeanMs: values.lambda * 1000,
    maxAttempts: values["max-attempts"] === 0 ? Infinity : values["max-attempts"],
    fleet: resolveProtection(values),
    honorRetryAfter: values["honor-retry-after"],
    hedgeDelayMs: values["hedge-delay"],
  };
  checkHedging(values, strategy, retry);
  return { strategy, timeoutMs: values.timeout, propagateDeadline: values["propagate-deadline"], retry };
}

function resolveArrivals(values: LoadFlagValues): Arrivals {
  if (values.arrivals === "closed") {
    if (values.rate !== undefined) throw new UsageError("-rate applies to -arrivals open; closed users send at -clients / -lambda");
    return { kind: "closed" };
  }
  if (values.rate === undefined) throw new UsageError("-arrivals open needs -rate, the arrivals per second");
  return { kind: "open", ratePerSec: values.rate, maxChains: values["max-chains"] };
}

/** A short description of the strategy and its parameters, for the start-up line. */
export function describeStrategy(options: Pick<LoadConfig, "strategy" | "retry" | "clients">): string {
  const { backoff } = options.retry;
  const parameters = Object.entries(backoff)
    .filter(([key]) => key !== "kind")
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(", ");
  const attempts = Number.isFinite(options.retry.maxAttempts) ? `, max attempts ${options.retry.maxAttempts}` : "";
  const hedgeDelayMs = options.retry.hedgeDelayMs;
  if (hedgeDelayMs !== undefined) return `hedging (a copy every ${formatDuration(hedgeDelayMs)} unless answered)${attempts}`;
  const fleet = options.retry.fleet === undefined ? "" : describeProtection(options.retry.fleet, options.clients);
  return `${options.strategy} (${parameters})${attempts}${fleet}`;
}

import { retryBudget } from "../backoff/index.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ParseOutcome, type ProgramDescription } from "../cli/flags.ts";
import { instantProblem, parseInstant } from "../cli/instant.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { RetryConfig } from "../model/client-loop.ts";
import {
  buildStrategyPolicy,
  findStrategy,
  STRATEGY_CHOICES,
  STRATEGY_NAMES,
  STRATEGY_PARAMETER_FLAGS,
  strategiesHelp,
  type StrategyName,
} from "../strategies/registry.ts";
import { parseShard, type Shard, shardProblem } from "./shard.ts";

/** Flags, defaults and help of ./client, in one table; the first five are the reference's. */
export const CLIENT_FLAGS = [
  { name: "clients", kind: "integer", default: 1000, min: 1, placeholder: "n", description: "number of simulated clients" },
  {
    name: "lambda",
    kind: "number",
    default: 10,
    min: 0,
    minExclusive: true,
    placeholder: "seconds",
    description: "mean seconds between one client's requests (exponentially distributed)",
  },
  {
    name: "timeout",
    kind: "duration",
    default: 2000,
    minMs: 0,
    minExclusive: true,
    description: "timeout on an HTTP request: abort it and its connection",
  },
  {
    name: "exponential-backoff",
    kind: "boolean",
    default: false,
    description: "retry with the reference program's exponential backoff (same as -strategy exponential-backoff)",
  },
  {
    name: "url",
    kind: "string",
    default: "http://127.0.0.1:8070/api",
    placeholder: "url",
    description: "where to send requests",
    check: checkUrl,
  },
  {
    name: "strategy",
    kind: "string",
    default: "fixed",
    choices: STRATEGY_CHOICES,
    placeholder: "name",
    description: `retry strategy: ${STRATEGY_NAMES.join(", ")} (-h lists each with its parameters)`,
  },
  ...STRATEGY_PARAMETER_FLAGS,
  {
    name: "max-attempts",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "n",
    description: "attempts per request including the first, then give up (0 = no limit)",
  },
  {
    name: "retry-budget",
    kind: "boolean",
    default: false,
    description: "gRPC-style retry throttling per client: retry only while tokens > budget-tokens/2",
  },
  {
    name: "budget-tokens",
    kind: "number",
    default: 10,
    min: 0,
    minExclusive: true,
    max: 1000,
    placeholder: "n",
    description: "retry budget size; a failure costs 1 token",
  },
  {
    name: "budget-ratio",
    kind: "number",
    default: 0.1,
    min: 0,
    minExclusive: true,
    placeholder: "f",
    description: "tokens a success earns back",
  },
  { name: "interval", kind: "duration", default: 5000, minMs: 0, minExclusive: true, description: "reporting window" },
  { name: "json", kind: "boolean", default: false, description: "print one JSON object per window instead of the text line" },
  { name: "duration", kind: "duration", default: 0, minMs: 0, description: "stop after this long (0 = until interrupted)" },
  {
    name: "seed",
    kind: "integer",
    default: undefined,
    min: 0,
    max: 2 ** 31 - 1,
    placeholder: "n",
    description: "random seed for a reproducible schedule (default: random, printed at start); each user draws from its own stream of it",
  },
  {
    name: "shard",
    kind: "string",
    default: "0/1",
    placeholder: "i/n",
    description:
      "run shard i of n: this process's share of the -clients users, the same users with the same seeded schedules as in one process; merge the shards' -json with 'thundering-herd merge'",
    check: shardProblem,
  },
  {
    name: "start-at",
    kind: "string",
    default: undefined,
    placeholder: "time",
    description:
      "start at this instant (RFC 3339 or epoch ms), waiting until then; reporting windows fall on a grid anchored there, so shards on many machines share window boundaries",
    check: instantProblem,
  },
  {
    name: "workers",
    kind: "integer",
    default: 1,
    min: 1,
    max: 1024,
    placeholder: "n",
    description: "worker threads to spread this process's users over; their windows are merged exactly",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const CLIENT_PROGRAM: ProgramDescription<typeof CLIENT_FLAGS> = {
  name: "client",
  summary:
    "N simulated clients with exponentially distributed request intervals, retrying failures with a strategy.\n" +
    "Every interval it prints OK / errors / timedout req/sec.",
  flags: CLIENT_FLAGS,
  epilog: `Strategies:\n${strategiesHelp()}`,
};

export interface ClientOptions {
  readonly clients: number;
  readonly url: string;
  readonly timeoutMs: number;
  readonly strategy: StrategyName;
  readonly retry: RetryConfig;
  readonly intervalMs: number;
  readonly json: boolean;
  /** 0 runs until interrupted. */
  readonly durationMs: number;
  readonly seed: number | undefined;
  readonly shard: Shard;
  /** When to start (epoch ms), and where the window grid is anchored; undefined: now. */
  readonly startAtEpochMs: number | undefined;
  readonly workers: number;
}

export type ClientFlagValues = FlagValues<typeof CLIENT_FLAGS>;

export function parseClientArgs(args: readonly string[]): ParseOutcome<typeof CLIENT_FLAGS> {
  return parseFlags(CLIENT_PROGRAM, args);
}

export function resolveClientOptions(values: ClientFlagValues): ClientOptions {
  let strategy = findStrategy(values.strategy)!.name as StrategyName;
  if (values["exponential-backoff"]) {
    if (strategy !== "fixed" && strategy !== "exponential-backoff") {
      throw new UsageError(`-exponential-backoff selects -strategy exponential-backoff; it cannot be combined with -strategy ${strategy}`);
    }
    strategy = "exponential-backoff";
  }
  return {
    clients: values.clients,
    url: values.url,
    timeoutMs: values.timeout,
    strategy,
    retry: {
      backoff: buildStrategyPolicy(strategy, values),
      thinkTimeMeanMs: values.lambda * 1000,
      maxAttempts: values["max-attempts"] === 0 ? Infinity : values["max-attempts"],
      budget: values["retry-budget"] ? retryBudget({ maxTokens: values["budget-tokens"], tokenRatio: values["budget-ratio"] }) : undefined,
    },
    intervalMs: values.interval,
    json: values.json,
    durationMs: values.duration,
    seed: values.seed,
    shard: parseShard(values.shard),
    startAtEpochMs: values["start-at"] === undefined ? undefined : parseInstant(values["start-at"]),
    workers: values.workers,
  };
}

/** A short description of the strategy and its parameters, for the start-up line. */
export function describeStrategy(options: ClientOptions): string {
  const { backoff } = options.retry;
  const parameters = Object.entries(backoff)
    .filter(([key]) => key !== "kind")
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(",") : String(value)}`)
    .join(", ");
  return `${options.strategy} (${parameters})`;
}

function checkUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "must be an http:// or https:// URL";
  } catch {
    return "must be an http:// or https:// URL";
  }
}

import {
  type BackoffPolicy,
  constantPolicy,
  decorrelatedJitterPolicy,
  equalJitterPolicy,
  exponentialPolicy,
  fullJitterPolicy,
  googlePolicy,
  grpcPolicy,
  POLICY_DEFAULTS,
  referencePolicy,
  retryBudget,
  tablePolicy,
} from "../backoff/index.ts";
import { DurationSyntaxError, parseDuration } from "../cli/duration.ts";
import { DEBUG_FLAG, type FlagSpec, type FlagValues, parseFlags, type ParseOutcome, type ProgramDescription } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { RetryConfig } from "../model/client-loop.ts";

/** Strategy names on the command line; `reference` is what `-exponential-backoff` selects. */
export const STRATEGIES = [
  "fixed",
  "reference",
  "exponential",
  "full-jitter",
  "equal-jitter",
  "decorrelated-jitter",
  "table",
  "google",
  "grpc",
] as const;
export type StrategyName = (typeof STRATEGIES)[number];

/** The reference client's constants (client.go): expFactor 2.71828, expJitter 0.1. */
const REFERENCE_FACTOR = 2.71828;
const DEFAULT_TABLE = POLICY_DEFAULTS.table.delaysMs.join(",");

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
    description: "retry with the reference program's exponential backoff (same as -strategy reference)",
  },
  { name: "simple-backoff-delay", kind: "duration", default: 100, minMs: 0, description: "delay between retries with the fixed strategy" },
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
    choices: STRATEGIES,
    placeholder: "name",
    description: `retry strategy: ${STRATEGIES.join(", ")}`,
  },
  {
    name: "min-delay",
    kind: "duration",
    default: undefined,
    minMs: 0,
    description: "first/base retry delay (exponential, jitter strategies: 100ms; grpc: 1s)",
  },
  { name: "max-delay", kind: "duration", default: undefined, minMs: 0, description: "cap on the retry delay (default 5m; grpc: 2m)" },
  {
    name: "backoff-factor",
    kind: "number",
    default: undefined,
    min: 1,
    placeholder: "f",
    description: "growth per failure (reference, exponential: 2.71828; grpc: 1.6)",
  },
  {
    name: "jitter",
    kind: "number",
    default: undefined,
    min: 0,
    placeholder: "f",
    description: "jitter: exponential: sd as a fraction of the delay (0.1); reference: sd in seconds (0.1); grpc: ± fraction (0.2)",
  },
  {
    name: "table",
    kind: "string",
    default: DEFAULT_TABLE,
    placeholder: "list",
    description: "table strategy: comma-separated waits in ms or Go durations",
    check: (value) => describeTableProblem(value),
  },
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
    description: "random seed for a reproducible schedule (default: random, printed at start)",
  },
  DEBUG_FLAG,
] as const satisfies readonly FlagSpec[];

export const CLIENT_PROGRAM: ProgramDescription<typeof CLIENT_FLAGS> = {
  name: "client",
  summary:
    "N simulated clients with exponentially distributed request intervals, retrying failures with a strategy.\n" +
    "Every interval it prints OK / errors / timedout req/sec.",
  flags: CLIENT_FLAGS,
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
}

export type ClientFlagValues = FlagValues<typeof CLIENT_FLAGS>;

export function parseClientArgs(args: readonly string[]): ParseOutcome<typeof CLIENT_FLAGS> {
  return parseFlags(CLIENT_PROGRAM, args);
}

export function resolveClientOptions(values: ClientFlagValues): ClientOptions {
  let strategy = values.strategy as StrategyName;
  if (values["exponential-backoff"]) {
    if (strategy !== "fixed" && strategy !== "reference") {
      throw new UsageError(`-exponential-backoff selects -strategy reference; it cannot be combined with -strategy ${strategy}`);
    }
    strategy = "reference";
  }
  let backoff: BackoffPolicy;
  try {
    backoff = buildPolicy(strategy, values);
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(`invalid settings for -strategy ${strategy}: ${inFlagNames(error.message)}`);
    throw error;
  }
  return {
    clients: values.clients,
    url: values.url,
    timeoutMs: values.timeout,
    strategy,
    retry: {
      backoff,
      thinkTimeMeanMs: values.lambda * 1000,
      maxAttempts: values["max-attempts"] === 0 ? Infinity : values["max-attempts"],
      budget: values["retry-budget"] ? retryBudget({ maxTokens: values["budget-tokens"], tokenRatio: values["budget-ratio"] }) : undefined,
    },
    intervalMs: values.interval,
    json: values.json,
    durationMs: values.duration,
    seed: values.seed,
  };
}

/** The flag behind each parameter of a backoff policy, for messages about them. */
const FLAG_OF_POLICY_FIELD: Readonly<Record<string, string>> = {
  delayMs: "-simple-backoff-delay",
  minDelayMs: "-min-delay",
  baseMs: "-min-delay",
  initialMs: "-min-delay",
  maxDelayMs: "-max-delay",
  capMs: "-max-delay",
  maxMs: "-max-delay",
  factor: "-backoff-factor",
  multiplier: "-backoff-factor",
  jitter: "-jitter",
  jitterMs: "-jitter",
  delaysMs: "-table",
};

/** "minDelayMs must be <= maxDelayMs (got 2000 > 1000)" in the words of the command line: "-min-delay (ms) must be <= -max-delay (ms) (got 2000 > 1000)". */
function inFlagNames(message: string): string {
  return message.replace(/\b[a-z][A-Za-z]*\b/g, (word) => {
    const flag = FLAG_OF_POLICY_FIELD[word];
    if (flag === undefined) return word;
    return word.endsWith("Ms") ? `${flag} (ms)` : flag;
  });
}

/** The backoff policy a strategy name and the shared parameter flags describe. */
export function buildPolicy(strategy: StrategyName, values: ClientFlagValues): BackoffPolicy {
  const minDelayMs = values["min-delay"];
  const maxDelayMs = values["max-delay"];
  switch (strategy) {
    case "fixed":
      return constantPolicy({ delayMs: values["simple-backoff-delay"] });
    case "reference":
      return referencePolicy({
        minDelayMs,
        maxDelayMs,
        factor: values["backoff-factor"] ?? REFERENCE_FACTOR,
        jitterMs: values.jitter === undefined ? undefined : values.jitter * 1000,
      });
    case "exponential":
      return exponentialPolicy({ minDelayMs, maxDelayMs, factor: values["backoff-factor"] ?? REFERENCE_FACTOR, jitter: values.jitter });
    case "full-jitter":
      return fullJitterPolicy({ baseMs: minDelayMs, capMs: maxDelayMs });
    case "equal-jitter":
      return equalJitterPolicy({ baseMs: minDelayMs, capMs: maxDelayMs });
    case "decorrelated-jitter":
      return decorrelatedJitterPolicy({ baseMs: minDelayMs, capMs: maxDelayMs });
    case "table":
      return tablePolicy({ delaysMs: parseTable(values.table) });
    case "google":
      return googlePolicy();
    case "grpc":
      return grpcPolicy({ initialMs: minDelayMs, maxMs: maxDelayMs, multiplier: values["backoff-factor"], jitter: values.jitter });
  }
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

function parseTable(text: string): number[] {
  return text.split(",").map((item) => {
    const trimmed = item.trim();
    return /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : parseDuration(trimmed);
  });
}

function describeTableProblem(text: string): string | undefined {
  try {
    const table = parseTable(text);
    return table.length === 0 ? "must list at least one wait" : undefined;
  } catch (error) {
    if (!(error instanceof DurationSyntaxError)) throw error;
    return "must be comma-separated waits in ms (e.g. 0,10,100) or Go durations (e.g. 0,10ms,1s)";
  }
}

function checkUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "must be an http:// or https:// URL";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_INVALID_URL") throw error;
    return "must be an http:// or https:// URL";
  }
}

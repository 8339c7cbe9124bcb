import {
  ADAPTIVE_THROTTLE_DEFAULTS,
  AWS_RETRY_QUOTA_DEFAULTS,
  adaptiveThrottleConfig,
  awsRetryQuota,
  CIRCUIT_BREAKER_DEFAULTS,
  consecutiveBreaker,
  ENVOY_RETRY_BUDGET_DEFAULTS,
  envoyRetryBudget,
  FINAGLE_RETRY_BUDGET_DEFAULTS,
  finagleRetryBudget,
  RETRY_BUDGET_DEFAULTS,
  RETRY_BUDGET_MAX_TOKENS_LIMIT,
  retryBudget,
  samplingBreaker,
} from "../backoff/index.ts";
import { BROOKER_RETRY_BREAKER, retryBreaker, YANDEX_RETRY_BREAKER } from "../backoff/retry-breaker.ts";
import { BROOKER_TOKEN_BUCKET, YANDEX_BUDGET_RATIO, yandexRetryBudget } from "../backoff/retry-token-bucket.ts";
import type { FlagSpec, FlagValues } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import type { FleetConfig, RetryBudgetConfig, RetryBudgetKind } from "../model/client-instances.ts";

/*
 * The fleet-level protections as command-line flags, read by the client and (through the
 * client's flag table) the simulator: a retry budget (-budget), an adaptive throttle
 * (-throttle), a circuit breaker (-breaker), and how many client instances the users are
 * spread over (-instances). Each parameter flag defaults to its mechanism's published value;
 * a parameter set to anything else for a mechanism that does not read it is a usage error,
 * so that no flag is silently ignored.
 */

export const BUDGET_KINDS = ["grpc", "envoy", "finagle", "aws", "yandex", "brooker"] as const satisfies readonly RetryBudgetKind[];
export const THROTTLE_KINDS = ["sre"] as const;
export const BREAKER_KINDS = ["consecutive", "sampling", "yandex-retry", "brooker-retry"] as const;

export const PROTECTION_FLAGS = [
  {
    name: "instances",
    group: "system",
    kind: "integer",
    default: 0,
    min: 0,
    placeholder: "n",
    description: "client instances the clients are spread over, each with its own budget, throttle and breaker (0 = one per client)",
  },
  {
    name: "budget",
    group: "protection",
    kind: "string",
    default: undefined,
    choices: BUDGET_KINDS,
    placeholder: "name",
    description: `retry budget per instance: ${BUDGET_KINDS.join(", ")} (-h lists each with its parameters)`,
  },
  {
    name: "retry-budget",
    group: "protection",
    kind: "boolean",
    default: false,
    description: "gRPC retry throttling: the same as -budget grpc",
  },
  {
    name: "budget-tokens",
    group: "protection",
    kind: "number",
    default: RETRY_BUDGET_DEFAULTS.maxTokens,
    min: 0,
    minExclusive: true,
    max: RETRY_BUDGET_MAX_TOKENS_LIMIT,
    placeholder: "n",
    description: "grpc: token ceiling and starting value; a failure costs 1 token",
  },
  {
    name: "budget-ratio",
    group: "protection",
    kind: "number",
    min: 0,
    minExclusive: true,
    placeholder: "f",
    // gRPC's example tokenRatio and Yandex's retry_budget_ratio are both 0.1.
    default: RETRY_BUDGET_DEFAULTS.tokenRatio,
    description: "grpc: tokens a success earns back; yandex: what a successful first try earns, as a fraction of a retry's cost",
  },
  {
    name: "budget-percent",
    group: "protection",
    kind: "number",
    // Envoy's budget_percent and Finagle's percentCanRetry are both 20 %.
    default: ENVOY_RETRY_BUDGET_DEFAULTS.budgetPercent,
    min: 0,
    placeholder: "percent",
    description: "envoy: retries in progress per 100 requests in progress; finagle: retries per 100 requests",
  },
  {
    name: "budget-min-concurrency",
    group: "protection",
    kind: "integer",
    default: ENVOY_RETRY_BUDGET_DEFAULTS.minRetryConcurrency,
    min: 0,
    placeholder: "n",
    description: "envoy: retries in progress always allowed",
  },
  {
    name: "budget-ttl",
    group: "protection",
    kind: "duration",
    default: FINAGLE_RETRY_BUDGET_DEFAULTS.ttlMs,
    minMs: 1000,
    description: "finagle: how long a request's deposit counts, 1s to 1m",
  },
  {
    name: "budget-min-per-sec",
    group: "protection",
    kind: "integer",
    default: FINAGLE_RETRY_BUDGET_DEFAULTS.minRetriesPerSec,
    min: 0,
    placeholder: "n",
    description: "finagle: retries per second always allowed",
  },
  {
    name: "budget-quota",
    group: "protection",
    kind: "integer",
    default: AWS_RETRY_QUOTA_DEFAULTS.tokens,
    min: 1,
    placeholder: "n",
    description: "aws: the retry quota's size and starting value, tokens",
  },
  {
    name: "budget-retry-cost",
    group: "protection",
    kind: "integer",
    default: AWS_RETRY_QUOTA_DEFAULTS.retryCost,
    min: 1,
    placeholder: "n",
    description: "aws: tokens a retry takes",
  },
  {
    name: "budget-timeout-cost",
    group: "protection",
    kind: "integer",
    default: AWS_RETRY_QUOTA_DEFAULTS.timeoutRetryCost,
    min: 1,
    placeholder: "n",
    description: "aws: tokens a retry after a timeout takes",
  },
  {
    name: "throttle",
    group: "protection",
    kind: "string",
    default: undefined,
    choices: THROTTLE_KINDS,
    placeholder: "name",
    description: "adaptive throttle per instance: sre (Google SRE's client-side throttling); throttled requests are never sent",
  },
  {
    name: "throttle-k",
    group: "protection",
    kind: "number",
    default: ADAPTIVE_THROTTLE_DEFAULTS.k,
    min: 0,
    minExclusive: true,
    placeholder: "k",
    description: "sre: reject with probability (requests - k x accepts) / (requests + 1)",
  },
  {
    name: "throttle-window",
    group: "protection",
    kind: "duration",
    default: ADAPTIVE_THROTTLE_DEFAULTS.windowMs,
    minMs: 0,
    minExclusive: true,
    description: "sre: how much history counts",
  },
  {
    name: "breaker",
    group: "protection",
    kind: "string",
    default: undefined,
    choices: BREAKER_KINDS,
    placeholder: "name",
    description:
      "circuit breaker per instance: consecutive or sampling (while open, requests fail at once, locally); " +
      "or a retry breaker that stops only retries: yandex-retry, brooker-retry",
  },
  {
    name: "breaker-failures",
    group: "protection",
    kind: "integer",
    default: CIRCUIT_BREAKER_DEFAULTS.consecutive.failureThreshold,
    min: 1,
    placeholder: "n",
    description: "consecutive: failures in a row that open it",
  },
  {
    name: "breaker-ratio",
    group: "protection",
    kind: "number",
    default: CIRCUIT_BREAKER_DEFAULTS.sampling.failureRatio,
    min: 0,
    minExclusive: true,
    max: 1,
    placeholder: "f",
    description: "sampling: failure ratio that opens it; yandex-retry, brooker-retry: failure ratio that stops retries",
  },
  {
    name: "breaker-min-throughput",
    group: "protection",
    kind: "integer",
    default: CIRCUIT_BREAKER_DEFAULTS.sampling.minimumThroughput,
    min: 1,
    placeholder: "n",
    description: "sampling: calls in the window before the ratio counts",
  },
  {
    name: "breaker-window",
    group: "protection",
    kind: "duration",
    default: CIRCUIT_BREAKER_DEFAULTS.sampling.samplingMs,
    minMs: 0,
    minExclusive: true,
    description: "sampling: the window the ratio is measured over",
  },
  {
    name: "breaker-break",
    group: "protection",
    kind: "duration",
    default: CIRCUIT_BREAKER_DEFAULTS.consecutive.breakMs,
    minMs: 0,
    description: "how long it stays open before a probe",
  },
] as const satisfies readonly FlagSpec[];

export type ProtectionValues = FlagValues<typeof PROTECTION_FLAGS>;
type ParameterFlag = Exclude<(typeof PROTECTION_FLAGS)[number]["name"], "instances" | "budget" | "retry-budget" | "throttle" | "breaker">;

/** A fleet-level mechanism: the flag and choice that switch it on, and the parameter flags it reads. */
export interface Mechanism {
  readonly flag: "budget" | "throttle" | "breaker";
  readonly choice: string;
  readonly reads: readonly ParameterFlag[];
}

/** Every mechanism, as the client, the simulator and choose know them. */
export const MECHANISMS = [
  { flag: "budget", choice: "grpc", reads: ["budget-tokens", "budget-ratio"] },
  { flag: "budget", choice: "envoy", reads: ["budget-percent", "budget-min-concurrency"] },
  { flag: "budget", choice: "finagle", reads: ["budget-percent", "budget-ttl", "budget-min-per-sec"] },
  { flag: "budget", choice: "aws", reads: ["budget-quota", "budget-retry-cost", "budget-timeout-cost"] },
  { flag: "budget", choice: "yandex", reads: ["budget-ratio"] },
  { flag: "budget", choice: "brooker", reads: [] },
  { flag: "throttle", choice: "sre", reads: ["throttle-k", "throttle-window"] },
  { flag: "breaker", choice: "consecutive", reads: ["breaker-failures", "breaker-break"] },
  { flag: "breaker", choice: "sampling", reads: ["breaker-ratio", "breaker-min-throughput", "breaker-window", "breaker-break"] },
  { flag: "breaker", choice: "yandex-retry", reads: ["breaker-ratio"] },
  { flag: "breaker", choice: "brooker-retry", reads: ["breaker-ratio"] },
] as const satisfies readonly Mechanism[];

/** How a mechanism is named in messages: `-budget grpc`. */
const named = (mechanism: Mechanism) => `-${mechanism.flag} ${mechanism.choice}`;

/** The protections these flag values describe; a UsageError names the first problem. */
export function resolveProtection(values: ProtectionValues): FleetConfig {
  let budgetKind = values.budget as RetryBudgetKind | undefined;
  if (values["retry-budget"]) {
    if (budgetKind !== undefined && budgetKind !== "grpc") {
      throw new UsageError(`-retry-budget is -budget grpc; it cannot be combined with -budget ${budgetKind}`);
    }
    budgetKind = "grpc";
  }
  const chosen = { budget: budgetKind, throttle: values.throttle, breaker: values.breaker };
  const selected: readonly Mechanism[] = MECHANISMS.filter((mechanism) => chosen[mechanism.flag] === mechanism.choice);
  const read = new Set(selected.flatMap((mechanism) => mechanism.reads));
  for (const spec of PROTECTION_FLAGS) {
    const flag = spec.name as ParameterFlag;
    if (!isParameter(flag) || read.has(flag) || values[flag] === spec.default) continue;
    throw misplaced(flag, selected);
  }
  try {
    return {
      instances: values.instances,
      budget: budgetKind === undefined ? undefined : budgetConfig(budgetKind, values),
      throttle:
        values.throttle === undefined
          ? undefined
          : adaptiveThrottleConfig({ k: values["throttle-k"], windowMs: values["throttle-window"] }),
      breaker: values.breaker === undefined ? undefined : breakerConfig(values.breaker as BreakerKind, values),
    };
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(`invalid protection settings: ${error.message}`);
    throw error;
  }
}

const isParameter = (name: string): name is ParameterFlag =>
  MECHANISMS.some((mechanism) => (mechanism.reads as readonly string[]).includes(name));

/** The usage error for a parameter flag that no selected mechanism reads. */
function misplaced(flag: ParameterFlag, selected: readonly Mechanism[]): UsageError {
  const owners: readonly Mechanism[] = MECHANISMS.filter((mechanism) => (mechanism.reads as readonly string[]).includes(flag));
  const current = selected.find((mechanism) => mechanism.flag === owners[0]!.flag);
  const ownerFlags = owners.map(named).join(" or ");
  return new UsageError(
    current === undefined
      ? `-${flag} needs ${ownerFlags}`
      : `-${flag} does not apply to ${named(current)} (it is a parameter of ${ownerFlags})`,
  );
}

type BreakerKind = (typeof BREAKER_KINDS)[number];

function breakerConfig(kind: BreakerKind, values: ProtectionValues): FleetConfig["breaker"] {
  switch (kind) {
    case "consecutive":
      return consecutiveBreaker({ failureThreshold: values["breaker-failures"], breakMs: values["breaker-break"] });
    case "sampling":
      return samplingBreaker({
        failureRatio: values["breaker-ratio"],
        minimumThroughput: values["breaker-min-throughput"],
        samplingMs: values["breaker-window"],
        breakMs: values["breaker-break"],
      });
    case "yandex-retry":
      return retryBreaker({ ...YANDEX_RETRY_BREAKER, failureRatio: values["breaker-ratio"] });
    case "brooker-retry":
      return retryBreaker({ ...BROOKER_RETRY_BREAKER, failureRatio: values["breaker-ratio"] });
  }
}

function budgetConfig(kind: RetryBudgetKind, values: ProtectionValues): RetryBudgetConfig {
  switch (kind) {
    case "grpc":
      return { kind, budget: retryBudget({ maxTokens: values["budget-tokens"], tokenRatio: values["budget-ratio"] }) };
    case "envoy":
      return {
        kind,
        budget: envoyRetryBudget({ budgetPercent: values["budget-percent"], minRetryConcurrency: values["budget-min-concurrency"] }),
      };
    case "finagle":
      return {
        kind,
        budget: finagleRetryBudget({
          ttlMs: values["budget-ttl"],
          minRetriesPerSec: values["budget-min-per-sec"],
          percentCanRetry: values["budget-percent"],
        }),
      };
    case "aws":
      return {
        kind,
        budget: awsRetryQuota({
          tokens: values["budget-quota"],
          retryCost: values["budget-retry-cost"],
          timeoutRetryCost: values["budget-timeout-cost"],
        }),
      };
    case "yandex":
      return { kind, budget: yandexRetryBudget(values["budget-ratio"]) };
    case "brooker":
      return { kind, budget: BROOKER_TOKEN_BUCKET };
  }
}

/** A short description for the client's start-up line, or "" when nothing is on. */
export function describeProtection(config: FleetConfig, users: number): string {
  const parts: string[] = [];
  if (config.budget !== undefined) parts.push(`budget ${config.budget.kind} (${describeFields(config.budget.budget)})`);
  if (config.throttle !== undefined) parts.push(`throttle sre (${describeFields(config.throttle)})`);
  if (config.breaker !== undefined) parts.push(`breaker ${config.breaker.kind} (${describeFields(config.breaker)})`);
  if (parts.length === 0) return "";
  const instances = config.instances === 0 ? users : Math.min(config.instances, users);
  return `, ${parts.join(", ")}, ${instances === users ? "one instance per client" : `${instances} instance${instances === 1 ? "" : "s"}`}`;
}

function describeFields(object: object): string {
  return Object.entries(object)
    .filter(([key]) => key !== "kind")
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(", ");
}

/** Help text: each mechanism, its source and its parameters' defaults. */
export function protectionHelp(): string {
  return [
    "  -budget grpc (also -retry-budget): gRPC retry throttling: tokens start at -budget-tokens (10); a failure costs 1, a success",
    "      earns -budget-ratio (0.1); retries only while tokens > half. source: grpc/proposal A6-client-retries.md",
    "  -budget envoy: retries in progress < max(-budget-min-concurrency 3, -budget-percent 20 % of requests in progress).",
    "      source: Envoy, circuit_breaker.proto RetryBudget",
    "  -budget finagle: every request deposits, deposits expire after -budget-ttl (10s); retries may withdraw -budget-percent (20)",
    '      % of them, plus -budget-min-per-sec (10) x ttl. source: Finagle, "Retry budgets" (finagle.github.io/blog/2016/02/08)',
    "  -budget aws: a quota of -budget-quota (500); a retry takes -budget-retry-cost (5), or -budget-timeout-cost (10) after a",
    "      timeout; a success gives back its retry's cost, or 1. source: AWS SDKs, standard retry mode",
    "  -budget yandex: a bucket of 3000 tokens; a retry takes 100 while 100 are there; a first try that succeeds earns",
    `      -budget-ratio (${YANDEX_BUDGET_RATIO}) x 100. source: Yandex, "Good Retry, Bad Retry" (github.com/jirfag/simulations)`,
    "  -budget brooker: a bucket of 5 tokens; every request adds 0.1; a retry takes 1 while more than 1 is there.",
    '      source: Marc Brooker, "Fixing retries with token buckets and circuit breakers" (2022)',
    "  -throttle sre: reject locally with probability max(0, (requests - k x accepts) / (requests + 1)), k -throttle-k (2), over",
    '      -throttle-window (2m). source: Google, Site Reliability Engineering, ch. 21 "Handling Overload"',
    "  -breaker consecutive: open after -breaker-failures (5) in a row; -breaker sampling: open at -breaker-ratio (0.1) failures",
    "      over -breaker-window (30s) with at least -breaker-min-throughput (100) calls; open for -breaker-break (5s), then one",
    "      probe. source: cockatiel (ConsecutiveBreaker), Polly v8 (CircuitBreakerStrategyOptions defaults)",
    "  -breaker yandex-retry: no retry while failures of the attempts ended in the last 200 ms reach -breaker-ratio (0.1), nor",
    '      while none ended. source: Yandex, "Good Retry, Bad Retry"',
    "  -breaker brooker-retry: no retry while failed attempts / requests since the start pass -breaker-ratio (0.1).",
    '      source: Marc Brooker, "Fixing retries with token buckets and circuit breakers" (2022)',
    "",
  ].join("\n");
}

import type { BackoffPolicy } from "../backoff/policy.ts";
import type { RetryBudget } from "../backoff/budget.ts";
import type { RetryConfig } from "../model/client-loop.ts";
import type { FlagSettings } from "./settings.ts";

/*
 * The winner's settings as configuration for the systems people run. Each generator maps
 * what was simulated onto what the system can say, and says so in notes where it cannot
 * express it exactly (and what the closest setting is).
 *
 * Sources for the field names and limits:
 * - gRPC proposal A6, "gRPC Retry Design", https://github.com/grpc/proposal/blob/master/A6-client-retries.md
 *   (retryPolicy: maxAttempts >= 2, values above 5 treated as 5; initialBackoff, maxBackoff as
 *   "<seconds>s" strings > 0; backoffMultiplier > 0; retryableStatusCodes non-empty;
 *   retryThrottling: maxTokens in (0, 1000], tokenRatio > 0 with 3 decimal places; hedgingPolicy:
 *   maxAttempts >= 2, values above 5 treated as 5, hedgingDelay, nonFatalStatusCodes; a method
 *   has a retryPolicy or a hedgingPolicy, never both). Retry n waits
 *   min(initialBackoff x backoffMultiplier^(n-1), maxBackoff) x random(0.8, 1.2) since A6's
 *   revision of August 2024 (before it, random(0, that backoff)); grpc-js since June 2025 (grpc/grpc-node#2960).
 * - Envoy API v3: config.route.v3.RetryPolicy (retry_on, num_retries, per_try_timeout,
 *   retry_back_off {base_interval, max_interval}) and config.cluster.v3.CircuitBreakers
 *   (thresholds[].retry_budget {budget_percent {value}, min_retry_concurrency}),
 *   https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto and
 *   https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/circuit_breaker.proto
 * - AWS SDKs and Tools Reference Guide, "Retry behavior",
 *   https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html (retryMode
 *   standard | adaptive, maxAttempts); AWS SDK for JavaScript v3, @smithy/util-retry
 *   ConfiguredRetryStrategy(maxAttempts, computeNextBackoffDelay).
 * - cockatiel, https://github.com/connor4312/cockatiel: retry(handleAll, { maxAttempts, backoff })
 *   where maxAttempts counts retries after the first call (default Infinity);
 *   ExponentialBackoff { initialDelay, maxDelay, exponent, generator }, ConstantBackoff,
 *   DelegateBackoff; circuitBreaker(handleAll, { halfOpenAfter, breaker }).
 * - p-retry, https://github.com/sindresorhus/p-retry: { retries, factor, minTimeout,
 *   maxTimeout, randomize } (retries may be Infinity; randomize multiplies by 1 to 2).
 */

/** What the winner does, as simulated. */
export interface RetryIntent {
  readonly id: string;
  readonly policy: BackoffPolicy;
  /** Attempts per request including the first; Infinity for no limit. */
  readonly maxAttempts: number;
  /** The per-client gRPC-style retry budget (-retry-budget), if any. */
  readonly budget: RetryBudget | undefined;
  /** Per-attempt timeout. */
  readonly timeoutMs: number;
  /** With hedging (-hedge-delay): the delay between copies; undefined when the winner retries instead. */
  readonly hedgeDelayMs?: number | undefined;
  /** The users' mean think time (the reference policy grows its first wait from it). */
  readonly thinkTimeMeanMs: number;
  /** Every client flag the candidate set, for mechanisms beyond the backoff (-budget, -throttle, -breaker, …). */
  readonly client: FlagSettings;
  /** Server flags the candidate set (with -server-side). */
  readonly server: FlagSettings;
  /** Who held the simulated budget, when not each user (a tier of a chain: one budget for all its calls). */
  readonly budgetHolder?: string | undefined;
}

/** What a simulated policy does, as a snippet needs it: its retry config, per-attempt timeout and the flags it was given. */
export function intentOf(id: string, retry: RetryConfig, timeoutMs: number, client: FlagSettings, server: FlagSettings = {}): RetryIntent {
  return {
    id,
    policy: retry.backoff,
    maxAttempts: retry.maxAttempts,
    budget: retry.fleet?.budget?.kind === "grpc" ? retry.fleet.budget.budget : undefined,
    timeoutMs,
    hedgeDelayMs: retry.hedgeDelayMs,
    thinkTimeMeanMs: retry.thinkTimeMeanMs,
    client,
    server,
  };
}

export interface Snippet {
  readonly id: "grpc" | "envoy" | "aws" | "aws-code" | "cockatiel" | "p-retry" | "thundering-herd";
  readonly title: string;
  readonly file: string;
  readonly language: "json" | "yaml" | "typescript";
  readonly text: string;
  /** What the system cannot express, and what was chosen instead. */
  readonly notes: readonly string[];
}

/** gRPC treats maxAttempts above this as this (A6). */
export const GRPC_MAX_ATTEMPTS = 5;
/** gRPC's retry jitter, ±20 % of the backoff (A6). */
const GRPC_JITTER = 0.2;
/** A finite number of attempts for systems that need one when the winner has no limit. */
const UNLIMITED_STANDIN = 10;

type Jitter = "none" | "full" | "equal" | "decorrelated" | "proportional" | "absolute" | "table" | "additive" | "spread";

/** The winner's waits as first wait × multiplier^(n-1), capped: the shape most systems speak. */
interface Shape {
  /** The first wait: its ceiling for full-jitter kinds, its centre otherwise. */
  readonly firstMs: number;
  readonly multiplier: number;
  readonly maxMs: number;
  readonly jitter: Jitter;
  /** Mean of the first wait. */
  readonly meanFirstMs: number;
  /** Attempts the policy itself allows (google gives up after 5 retries). */
  readonly policyAttempts: number;
  readonly notes: readonly string[];
}

function shapeOf(intent: RetryIntent): Shape {
  const policy = intent.policy;
  switch (policy.kind) {
    case "constant":
      return shape(policy.delayMs, 1, policy.delayMs, "none", policy.delayMs);
    case "exponential": {
      const first = Math.min(policy.minDelayMs * policy.factor, policy.maxDelayMs);
      return shape(first, policy.factor, policy.maxDelayMs, "proportional", first);
    }
    case "reference": {
      const first = Math.min(intent.thinkTimeMeanMs * policy.factor, policy.maxDelayMs);
      return shape(first, policy.factor, policy.maxDelayMs, "absolute", first, Infinity, [
        `the reference backoff's first wait is ${policy.factor} x the user's own think time before the failed attempt ` +
          `(${ms(intent.thinkTimeMeanMs)} on average); a fixed first wait of ${ms(first)} is the closest`,
      ]);
    }
    case "table": {
      const entries = policy.delaysMs.slice(1).filter((entry) => entry > 0);
      const first = entries[0] ?? 1;
      const last = entries.at(-1) ?? first;
      const steps = Math.max(1, policy.delaysMs.length - 2);
      const multiplier = last > first ? Number(((last / first) ** (1 / steps)).toFixed(3)) : 1;
      return shape(first, multiplier, last, "table", first, Infinity, [
        `the table of waits (${policy.delaysMs.join(", ")} ms) is approximated by an exponential from ${ms(first)} growing ${multiplier}x to ${ms(last)}`,
      ]);
    }
    case "google": {
      const means = meanSequence(intent, policy.maxRetries + 1, (retry) => 1000 * 2 ** (retry - 1) + 500);
      return fittedShape(1000, means, 1000 * 2 ** (policy.maxRetries - 1), "additive", policy.maxRetries + 1);
    }
    case "full-jitter":
      return shape(policy.baseMs, 2, policy.capMs, "full", policy.baseMs / 2);
    case "equal-jitter":
      return shape(policy.baseMs, 2, policy.capMs, "equal", (policy.baseMs * 3) / 4);
    case "decorrelated-jitter": {
      // Each wait is U(base, 3 × the last), capped, the first after base: a mean of (base + 3 × the last mean) ÷ 2.
      let last = policy.baseMs;
      const means = meanSequence(intent, Infinity, () => (last = Math.min(policy.capMs, (policy.baseMs + 3 * last) / 2)));
      return fittedShape(policy.baseMs, means, policy.capMs, "decorrelated", Infinity);
    }
    case "grpc":
      return shape(policy.initialMs, policy.multiplier, policy.maxMs, "spread", policy.initialMs);
  }
}

function shape(
  firstMs: number,
  multiplier: number,
  maxMs: number,
  jitter: Jitter,
  meanFirstMs: number,
  policyAttempts = Infinity,
  notes: readonly string[] = [],
): Shape {
  return { firstMs, multiplier, maxMs: Math.max(maxMs, firstMs), jitter, meanFirstMs, policyAttempts, notes };
}

const attemptsOf = (intent: RetryIntent, form: Shape) => Math.min(intent.maxAttempts, form.policyAttempts);

/** Retries whose mean waits a fitted multiplier matches when the winner has no attempt limit. */
const UNLIMITED_RETRIES_SHOWN = 8;

/** The winner's mean wait before each retry it makes (at most UNLIMITED_RETRIES_SHOWN without a limit). */
function meanSequence(intent: RetryIntent, policyAttempts: number, meanOf: (retry: number) => number): number[] {
  const attempts = Math.min(intent.maxAttempts, policyAttempts);
  const retries = Number.isFinite(attempts) ? Math.max(1, attempts - 1) : UNLIMITED_RETRIES_SHOWN;
  return Array.from({ length: retries }, (_, index) => meanOf(index + 1));
}

/**
 * A policy whose mean waits are not first × multiplier^(n-1) (decorrelated jitter's, Google's
 * added second) as the exponential that libraries speak: the multiplier that matches the mean
 * wait at the first retry and at the last the winner makes, and a note of how far the waits
 * between them are off.
 */
function fittedShape(firstMs: number, means: readonly number[], maxMs: number, jitter: Jitter, policyAttempts: number): Shape {
  const first = means[0]!;
  const last = means.at(-1)!;
  const multiplier = means.length > 1 ? Number(((last / first) ** (1 / (means.length - 1))).toFixed(3)) : 1;
  const fitted = means.map((_, index) => first * multiplier ** index);
  const worst = Math.max(...means.map((mean, index) => Math.abs(fitted[index]! / mean - 1)));
  const notes =
    means.length > 1
      ? [
          `the winner's mean waits (${means.map((mean) => ms(mean)).join(", ")}) are not a constant multiple of each other: a ` +
            `multiplier of ${multiplier} matches them at the first and the last retry, within ${(worst * 100).toFixed(1)} % between`,
        ]
      : [];
  return shape(firstMs, multiplier, maxMs, jitter, first, policyAttempts, notes);
}

/**
 * The winner's mean first wait, and its mean wait once capped: the cap scaled as the first wait
 * is (a half for full jitter, three quarters for equal jitter). gRPC waits the current backoff
 * times a uniform 0.8 to 1.2 (A6 since its 2024 revision, and grpc-js), so these are its
 * backoffs; p-retry's waits stop at maxTimeout exactly once capped.
 */
function meanWaits(form: Shape): { readonly initialMs: number; readonly maxMs: number } {
  const meanShare = form.firstMs > 0 ? Math.min(1, form.meanFirstMs / form.firstMs) : 1;
  return { initialMs: form.meanFirstMs, maxMs: Math.max(form.meanFirstMs, form.maxMs * meanShare) };
}

/**
 * The first retry's wait as a reader meets it: its mean, and the setting gRPC's service config
 * writes for it (initialBackoff); both 0 for a policy that never retries.
 */
export function firstWait(intent: RetryIntent): { readonly meanMs: number; readonly settingMs: number } {
  const form = shapeOf(intent);
  if (attemptsOf(intent, form) <= 1) return { meanMs: 0, settingMs: 0 };
  return { meanMs: form.meanFirstMs, settingMs: meanWaits(form).initialMs };
}

/** Milliseconds in Go notation for notes. */
function ms(value: number): string {
  if (value >= 1000) return `${Number((value / 1000).toPrecision(6))}s`;
  return `${Number(value.toPrecision(6))}ms`;
}

/** A protobuf JSON duration: seconds with up to 9 decimals and an "s", at least 1 ms here. */
export function protoDuration(valueMs: number): string {
  const seconds = Math.max(1, Math.round(valueMs)) / 1000;
  return `${Number(seconds.toFixed(9))}s`;
}

const round3 = (value: number) => Number(value.toFixed(3));

/** Mechanism flags the simulation had that a system may or may not express. */
function mechanisms(intent: RetryIntent): { budget?: string; throttle?: string; breaker?: string } {
  const found: { budget?: string; throttle?: string; breaker?: string } = {};
  for (const name of ["budget", "throttle", "breaker"] as const) {
    const value = intent.client[name];
    if (value !== undefined && value !== "" && value !== "off" && value !== "none") found[name] = value;
  }
  return found;
}

/** A mechanism's numeric parameter, looked up by a fragment of its flag name (e.g. "percent"). */
function parameter(intent: RetryIntent, prefix: string, fragment: string): number | undefined {
  for (const [name, value] of Object.entries(intent.client)) {
    if (name.startsWith(`${prefix}-`) && name.includes(fragment)) {
      const number = Number.parseFloat(value);
      if (Number.isFinite(number)) return number;
    }
  }
  return undefined;
}

function unexpressed(intent: RetryIntent, system: string, except: readonly string[]): string[] {
  const notes: string[] = [];
  const found = mechanisms(intent);
  for (const [name, value] of Object.entries(found)) {
    if (!except.includes(name)) notes.push(`${system} has no equivalent of the simulated -${name} ${value}; it is left out`);
  }
  const serverFlags = Object.keys(intent.server);
  if (serverFlags.length > 0) {
    notes.push(
      `the server half of the recommendation (${serverFlags.map((name) => `-${name}`).join(" ")}) belongs to the server, not to this client setting`,
    );
  }
  return notes;
}

/**
 * gRPC's retryThrottling for a winner with gRPC's budget, which A6 applies to retries and hedged
 * RPCs alike; undefined for another or none. Its note, if any, goes to `notes`.
 */
function retryThrottlingOf(intent: RetryIntent, notes: string[]): { maxTokens: number; tokenRatio: number } | undefined {
  if (intent.budget !== undefined) {
    notes.push(
      `retryThrottling is per channel in gRPC; the simulation gave ${intent.budgetHolder ?? "each user its own budget, as one channel per client"}`,
    );
    return { maxTokens: round3(intent.budget.maxTokens), tokenRatio: round3(intent.budget.tokenRatio) };
  }
  if (mechanisms(intent).budget !== "grpc") return undefined;
  const maxTokens = parameter(intent, "budget", "tokens") ?? 10;
  const tokenRatio = parameter(intent, "budget", "ratio") ?? 0.1;
  return { maxTokens: round3(maxTokens), tokenRatio: round3(tokenRatio) };
}

/**
 * A winner that hedges: gRPC's hedgingPolicy (A6), with retryThrottling for gRPC's budget (A6
 * withholds hedges as it does retries). Its copies fail over on UNAVAILABLE, what
 * gRPC makes of HTTP 429, 502, 503 and 504; the simulated copies also fail over on a timeout of
 * their own, which gRPC's one deadline over all copies cannot say.
 */
function grpcHedgingConfig(intent: RetryIntent, hedgeDelayMs: number): Snippet {
  const notes: string[] = [];
  let maxAttempts = intent.maxAttempts;
  if (maxAttempts > GRPC_MAX_ATTEMPTS) {
    notes.push(
      `gRPC allows at most ${GRPC_MAX_ATTEMPTS} copies (A6: larger values are treated as ${GRPC_MAX_ATTEMPTS}); the winner had ${maxAttempts}`,
    );
    maxAttempts = GRPC_MAX_ATTEMPTS;
  }
  const hedgingPolicy = { maxAttempts, hedgingDelay: protoDuration(hedgeDelayMs), nonFatalStatusCodes: ["UNAVAILABLE"] };
  notes.push(
    `gRPC's method timeout is a deadline over all copies; the simulated ${ms(intent.timeoutMs)} timeout of each copy has no field in the service config (set the call deadline yourself)`,
  );
  const retryThrottling = retryThrottlingOf(intent, notes);
  if (retryThrottling !== undefined)
    notes.push(
      "grpc-js (1.14) sends hedged copies whatever its retryThrottling tokens (it checks them only before a retry), though A6 withholds them",
    );
  notes.push(...unexpressed(intent, "gRPC's service config", retryThrottling === undefined ? [] : ["budget"]));
  const config = {
    methodConfig: [{ name: [{ service: "your.package.YourService" }], hedgingPolicy }],
    ...(retryThrottling === undefined ? {} : { retryThrottling }),
  };
  return {
    id: "grpc",
    title: "gRPC service config (hedgingPolicy)",
    file: "grpc-service-config.json",
    language: "json",
    text: `${JSON.stringify(config, null, 2)}\n`,
    notes,
  };
}

export function grpcServiceConfig(intent: RetryIntent): Snippet {
  if (intent.hedgeDelayMs !== undefined) return grpcHedgingConfig(intent, intent.hedgeDelayMs);
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  const config: Record<string, unknown> = {};
  const methodConfig: Record<string, unknown> = { name: [{ service: "your.package.YourService" }] };
  if (attempts <= 1) {
    notes.push("the winner does not retry: no retryPolicy (gRPC then makes one attempt)");
  } else {
    let maxAttempts = attempts;
    if (maxAttempts > GRPC_MAX_ATTEMPTS) {
      notes.push(
        `gRPC allows at most ${GRPC_MAX_ATTEMPTS} attempts (A6: larger values are treated as ${GRPC_MAX_ATTEMPTS}); the winner had ${Number.isFinite(attempts) ? attempts : "no limit"}`,
      );
      maxAttempts = GRPC_MAX_ATTEMPTS;
    }
    const backoffs = meanWaits(form);
    if (!(intent.policy.kind === "grpc" && intent.policy.jitter === GRPC_JITTER)) {
      notes.push(
        `gRPC waits the current backoff times a random 0.8 to 1.2 (A6, grpc-js); initialBackoff and maxBackoff are the winner's mean waits, so the average wait matches (as the multiplier allows) but not its spread`,
      );
    }
    methodConfig.retryPolicy = {
      maxAttempts,
      initialBackoff: protoDuration(backoffs.initialMs),
      maxBackoff: protoDuration(backoffs.maxMs),
      backoffMultiplier: form.multiplier,
      retryableStatusCodes: ["UNAVAILABLE"],
    };
    notes.push(
      `gRPC's method timeout is a deadline over all attempts; the simulated ${ms(intent.timeoutMs)} per-attempt timeout has no field in the service config (set the call deadline yourself)`,
    );
  }
  config.methodConfig = [methodConfig];
  const retryThrottling = retryThrottlingOf(intent, notes);
  if (retryThrottling !== undefined) config.retryThrottling = retryThrottling;
  else if (attempts > 1) notes.push("the winner had no retry budget, so there is no retryThrottling");
  notes.push(...unexpressed(intent, "gRPC's service config", retryThrottling === undefined ? [] : ["budget"]));
  return {
    id: "grpc",
    title: "gRPC service config (retryPolicy, retryThrottling)",
    file: "grpc-service-config.json",
    language: "json",
    text: `${JSON.stringify(config, null, 2)}\n`,
    notes,
  };
}

export function envoyConfig(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  let retries = attempts - 1;
  if (!Number.isFinite(retries)) {
    retries = UNLIMITED_STANDIN - 1;
    notes.push(`Envoy needs a number of retries and the winner had no limit; ${retries} is used`);
  }
  // Envoy draws the wait uniformly in [0, (2^n - 1) x base_interval), capped at max_interval.
  const scale = form.jitter === "full" ? 1 : 2;
  if (form.jitter !== "full")
    notes.push("Envoy's backoff is always fully jittered; its intervals are twice the winner's waits so the average matches");
  if (form.multiplier !== 2) notes.push(`Envoy's backoff doubles each time; the winner grew ${form.multiplier}x`);
  const found = mechanisms(intent);
  const percent = found.budget === "envoy" ? (parameter(intent, "budget", "percent") ?? 20) : 20;
  const minConcurrency = found.budget === "envoy" ? (parameter(intent, "budget", "concurrency") ?? 3) : 3;
  if (found.budget !== "envoy") {
    notes.push(
      intent.budget !== undefined || found.budget !== undefined
        ? "Envoy's retry budget limits concurrent retries to a share of active requests, not the simulated token budget; Envoy's defaults (20 %, 3) are shown as the closest"
        : "the winner had no retry budget; Envoy's defaults (20 %, 3) are shown because without a retry_budget Envoy caps concurrent retries at max_retries (3), a limit the simulation did not have",
    );
  }
  notes.push(...unexpressed(intent, "Envoy", ["budget"]));
  const lines = [
    "# Route configuration (RDS or route_config): the route's retry policy.",
    "name: local_route",
    "virtual_hosts:",
    "  - name: backend",
    '    domains: ["*"]',
    "    routes:",
    '      - match: { prefix: "/" }',
    "        route:",
    "          cluster: backend",
    "          # The simulated client had no deadline over all attempts; 0s disables Envoy's 15 s default.",
    "          timeout: 0s",
  ];
  if (retries >= 1) {
    lines.push(
      "          retry_policy:",
      '            retry_on: "5xx,reset,connect-failure"',
      `            num_retries: ${retries}`,
      `            per_try_timeout: ${protoDuration(intent.timeoutMs)}`,
      "            retry_back_off:",
      `              base_interval: ${protoDuration(form.firstMs * scale)}`,
      `              max_interval: ${protoDuration(form.maxMs * scale)}`,
    );
  } else {
    lines.push("          # The winner does not retry: no retry_policy.");
    notes.push("the winner does not retry: the route has no retry_policy");
  }
  lines.push(
    "---",
    "# Cluster: the retry budget, in its circuit breakers.",
    "name: backend",
    "circuit_breakers:",
    "  thresholds:",
    "    - priority: DEFAULT",
    "      retry_budget:",
    "        budget_percent:",
    `          value: ${percent.toFixed(1)}`,
    `        min_retry_concurrency: ${Math.round(minConcurrency)}`,
  );
  return {
    id: "envoy",
    title: "Envoy route retry_policy and cluster retry_budget",
    file: "envoy.yaml",
    language: "yaml",
    text: `${lines.join("\n")}\n`,
    notes,
  };
}

/** AWS standard mode's backoff: full jitter on 100 ms x 2^n, at most 20 s. */
const AWS_STANDARD = { baseMs: 100, capMs: 20_000 };

export function awsSettings(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const found = mechanisms(intent);
  let maxAttempts = attemptsOf(intent, form);
  if (!Number.isFinite(maxAttempts)) {
    maxAttempts = UNLIMITED_STANDIN;
    notes.push(`AWS SDKs need a number of attempts and the winner had no limit; ${maxAttempts} is used`);
  }
  const retryMode = found.throttle !== undefined ? "adaptive" : "standard";
  if (found.throttle !== undefined) {
    notes.push(
      `adaptive mode's client-side rate limiting is the closest to the simulated -throttle ${found.throttle}, not the same algorithm`,
    );
  }
  if (found.budget !== "aws") {
    notes.push(
      "standard mode adds AWS's retry quota (500 tokens per client, 5 per retry, 10 per timeout), a budget the simulation did not have",
    );
  }
  const exact = form.jitter === "full" && form.firstMs === AWS_STANDARD.baseMs && form.maxMs === AWS_STANDARD.capMs;
  if (!exact) notes.push("the SDK's own backoff is full jitter on 100 ms x 2^n up to 20 s; aws-sdk.ts sets the winner's waits instead");
  notes.push(...unexpressed(intent, "the AWS SDK", ["budget", "throttle"]));
  return {
    id: "aws",
    title: "AWS SDK client settings (also AWS_RETRY_MODE, AWS_MAX_ATTEMPTS)",
    file: "aws-sdk.json",
    language: "json",
    text: `${JSON.stringify({ retryMode, maxAttempts }, null, 2)}\n`,
    notes,
  };
}

/** The winner's wait for retry number `attempt` (1-based) as a JavaScript expression. */
function waitExpression(intent: RetryIntent, attempt: string): string {
  const policy = intent.policy;
  const cap = (expression: string, capMs: number) => `Math.min(${capMs}, ${expression})`;
  switch (policy.kind) {
    case "constant":
      return String(policy.delayMs);
    case "exponential":
      return `Math.max(0, ${cap(`${policy.minDelayMs} * ${policy.factor} ** ${attempt}`, policy.maxDelayMs)} * (1 + ${policy.jitter} * normal()))`;
    case "reference": {
      const first = Math.min(intent.thinkTimeMeanMs * policy.factor, policy.maxDelayMs);
      return `Math.max(0, ${cap(`${round3(first)} * ${policy.factor} ** (${attempt} - 1)`, policy.maxDelayMs)} + ${policy.jitterMs} * normal())`;
    }
    case "table": {
      const table = `[${policy.delaysMs.join(", ")}]`;
      return `((m) => (m === 0 ? 0 : Math.floor(m / 2) + Math.floor(Math.random() * m)))(${table}[Math.min(${attempt}, ${policy.delaysMs.length - 1})]!)`;
    }
    case "google":
      return `1000 * 2 ** (${attempt} - 1) + Math.floor(Math.random() * 1001)`;
    case "full-jitter":
      return `Math.random() * ${cap(`${policy.baseMs} * 2 ** (${attempt} - 1)`, policy.capMs)}`;
    case "equal-jitter":
      return `((t) => t / 2 + (Math.random() * t) / 2)(${cap(`${policy.baseMs} * 2 ** (${attempt} - 1)`, policy.capMs)})`;
    case "decorrelated-jitter":
      // Uniform between the base and the ceiling the simulated waits reach after `attempt` draws at their top, base x 3^attempt.
      return `${cap(`${policy.baseMs} + Math.random() * (${policy.baseMs} * 3 ** ${attempt} - ${policy.baseMs})`, policy.capMs)}`;
    case "grpc":
      return `${cap(`${policy.initialMs} * ${policy.multiplier} ** (${attempt} - 1)`, policy.maxMs)} * (1 + ${policy.jitter} * (2 * Math.random() - 1))`;
  }
}

const NORMAL_HELPER = [
  "/** A standard normal draw (Box-Muller), for the winner's normal jitter. */",
  "function normal(): number {",
  "  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());",
  "}",
];

const needsNormal = (intent: RetryIntent) => intent.policy.kind === "exponential" || intent.policy.kind === "reference";

function comment(notes: readonly string[]): string[] {
  return notes.map((note) => `// Note: ${note}.`);
}

export function awsCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  let maxAttempts = attemptsOf(intent, form);
  if (!Number.isFinite(maxAttempts)) {
    maxAttempts = UNLIMITED_STANDIN;
    notes.push(`the SDK needs a number of attempts and the winner had no limit; ${maxAttempts} is used`);
  }
  if (intent.policy.kind === "decorrelated-jitter") {
    notes.push("decorrelated jitter draws from the previous wait, which the SDK does not pass; its per-attempt ceiling is used");
  }
  notes.push(...unexpressed(intent, "ConfiguredRetryStrategy", []));
  const lines = [
    "// AWS SDK for JavaScript v3: the winner's waits through a ConfiguredRetryStrategy.",
    ...comment(notes),
    'import { ConfiguredRetryStrategy } from "@smithy/util-retry";',
    "",
    ...(needsNormal(intent) ? [...NORMAL_HELPER, ""] : []),
    `/** Pass as \`retryStrategy\` to any client, e.g. new S3Client({ retryStrategy }). */`,
    "export const retryStrategy = new ConfiguredRetryStrategy(",
    `  ${maxAttempts},`,
    `  (attempt: number): number => ${waitExpression(intent, "attempt")},`,
    ");",
  ];
  return {
    id: "aws-code",
    title: "AWS SDK for JavaScript v3: the winner's backoff",
    file: "aws-sdk.ts",
    language: "typescript",
    text: `${lines.join("\n")}\n`,
    notes,
  };
}

export function cockatielCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  const imports = new Set(["handleAll", "retry"]);
  let backoff: string;
  const kind = intent.policy.kind;
  if (kind === "constant") {
    imports.add("ConstantBackoff");
    backoff = `new ConstantBackoff(${form.firstMs})`;
  } else if (kind === "full-jitter" || kind === "equal-jitter") {
    const generator = kind === "full-jitter" ? "fullJitterGenerator" : "halfJitterGenerator";
    imports.add("ExponentialBackoff").add(generator);
    backoff = `new ExponentialBackoff({ initialDelay: ${form.firstMs}, maxDelay: ${form.maxMs}, exponent: 2, generator: ${generator} })`;
  } else {
    imports.add("DelegateBackoff");
    backoff = `new DelegateBackoff((context: { attempt: number }) => ${waitExpression(intent, "context.attempt")})`;
    if (kind === "decorrelated-jitter")
      notes.push("DelegateBackoff is given the per-attempt ceiling of decorrelated jitter, not its dependence on the previous wait");
  }
  const options = [Number.isFinite(attempts) ? `maxAttempts: ${Math.max(0, attempts - 1)}` : undefined, `backoff: ${backoff}`].filter(
    (part) => part !== undefined,
  );
  if (attempts <= 1) notes.push("the winner does not retry: maxAttempts 0");
  const found = mechanisms(intent);
  const body: string[] = [`export const retryPolicy = retry(handleAll, { ${options.join(", ")} });`];
  if (found.breaker !== undefined) {
    const breaker = found.breaker === "sampling" ? "SamplingBreaker" : "ConsecutiveBreaker";
    imports.add("circuitBreaker").add(breaker).add("wrap");
    const threshold = parameter(intent, "breaker", "threshold");
    const halfOpenAfter = parameter(intent, "breaker", "half-open") ?? parameter(intent, "breaker", "open") ?? 10_000;
    const construction =
      breaker === "SamplingBreaker"
        ? `new SamplingBreaker({ threshold: ${threshold ?? 0.5}, duration: ${parameter(intent, "breaker", "window") ?? 10_000} })`
        : `new ConsecutiveBreaker(${threshold ?? 5})`;
    body.push(
      `export const breakerPolicy = circuitBreaker(handleAll, { halfOpenAfter: ${halfOpenAfter}, breaker: ${construction} });`,
      "export const policy = wrap(retryPolicy, breakerPolicy);",
    );
    if (threshold === undefined)
      notes.push(`the breaker's threshold was not found among the simulated flags; cockatiel's usual value is shown`);
  } else {
    body.push("export const policy = retryPolicy;");
  }
  if (intent.budget !== undefined || found.budget !== undefined)
    notes.push("cockatiel has no retry budget; the winner's budget is left out");
  notes.push(...unexpressed(intent, "cockatiel", ["breaker", "budget"]));
  const lines = [
    "// cockatiel: the winner as a retry policy (maxAttempts counts retries after the first call).",
    ...comment(notes),
    `import { ${[...imports].sort().join(", ")} } from "cockatiel";`,
    "",
    ...(needsNormal(intent) && imports.has("DelegateBackoff") ? [...NORMAL_HELPER, ""] : []),
    ...body,
  ];
  return { id: "cockatiel", title: "cockatiel", file: "cockatiel.ts", language: "typescript", text: `${lines.join("\n")}\n`, notes };
}

export function pRetryCode(intent: RetryIntent): Snippet {
  const form = shapeOf(intent);
  const notes = [...form.notes];
  const attempts = attemptsOf(intent, form);
  const randomize = form.jitter !== "none";
  // p-retry waits min(minTimeout x factor^(n-1), maxTimeout), times a random 1 to 2 before the cap when randomized (mean 1.5).
  const means = meanWaits(form);
  const minTimeout = round3(randomize ? means.initialMs / 1.5 : form.firstMs);
  const maxTimeout = round3(means.maxMs);
  if (randomize)
    notes.push(
      "p-retry's jitter multiplies by a random 1 to 2 before its cap; minTimeout and maxTimeout are set so that the average first wait and the average capped wait match (at the cap p-retry's waits are not jittered)",
    );
  const retries = Number.isFinite(attempts) ? String(Math.max(0, attempts - 1)) : "Number.POSITIVE_INFINITY";
  if (intent.budget !== undefined || mechanisms(intent).budget !== undefined)
    notes.push("p-retry has no retry budget; the winner's budget is left out");
  notes.push(...unexpressed(intent, "p-retry", ["budget"]));
  const lines = [
    "// p-retry: the winner's waits as retries, factor, minTimeout and maxTimeout.",
    ...comment(notes),
    'import pRetry from "p-retry";',
    "",
    "export function withRetries<T>(operation: () => Promise<T>): Promise<T> {",
    "  return pRetry(operation, {",
    `    retries: ${retries},`,
    `    factor: ${form.multiplier},`,
    `    minTimeout: ${minTimeout},`,
    `    maxTimeout: ${maxTimeout},`,
    `    randomize: ${randomize},`,
    "  });",
    "}",
  ];
  return { id: "p-retry", title: "p-retry", file: "p-retry.ts", language: "typescript", text: `${lines.join("\n")}\n`, notes };
}

const FACTORIES: Readonly<Record<BackoffPolicy["kind"], string>> = {
  constant: "constantPolicy",
  exponential: "exponentialPolicy",
  reference: "referencePolicy",
  table: "tablePolicy",
  google: "googlePolicy",
  "full-jitter": "fullJitterPolicy",
  "equal-jitter": "equalJitterPolicy",
  "decorrelated-jitter": "decorrelatedJitterPolicy",
  grpc: "grpcPolicy",
};

export function libraryCode(intent: RetryIntent): Snippet {
  const notes: string[] = [];
  const policy = intent.policy;
  const factory = FACTORIES[policy.kind];
  const fields = Object.entries(policy)
    .filter(([key]) => key !== "kind")
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? `[${(value as number[]).join(", ")}]` : String(value)}`);
  if (policy.kind === "reference") {
    notes.push("retry() has no think time: the reference policy's first wait grows from minDelayMs, not from the user's think time");
  }
  const imports = new Set([factory, "retry", "type AttemptContext"]);
  const budget = intent.budget;
  const maxAttempts = Number.isFinite(intent.maxAttempts) ? String(intent.maxAttempts) : "Infinity";
  const lines = [
    "// thundering-herd/backoff: the winner, exactly as simulated.",
    ...comment([...notes, ...unexpressed(intent, "the backoff library", [])]),
  ];
  const body: string[] = [`const policy = ${factory}({ ${fields.join(", ")} });`, ""];
  if (budget === undefined) {
    body.push(
      "export function withRetries<T>(operation: (context: AttemptContext) => Promise<T>): Promise<T> {",
      `  return retry(operation, policy, { maxAttempts: ${maxAttempts} });`,
      "}",
    );
  } else {
    for (const name of ["retryBudget", "initialBudgetState", "budgetAfterFailure", "budgetAfterSuccess", "budgetAllowsRetry"])
      imports.add(name);
    body.push(
      `const budget = retryBudget({ maxTokens: ${budget.maxTokens}, tokenRatio: ${budget.tokenRatio} });`,
      "let tokens = initialBudgetState(budget);",
      "",
      "export function withRetries<T>(operation: (context: AttemptContext) => Promise<T>): Promise<T> {",
      "  const counted = async (context: AttemptContext): Promise<T> => {",
      "    try {",
      "      const result = await operation(context);",
      "      tokens = budgetAfterSuccess(budget, tokens);",
      "      return result;",
      "    } catch (error) {",
      "      tokens = budgetAfterFailure(budget, tokens);",
      "      throw error;",
      "    }",
      "  };",
      `  return retry(counted, policy, { maxAttempts: ${maxAttempts}, shouldRetry: () => budgetAllowsRetry(budget, tokens) });`,
      "}",
    );
  }
  const sorted = [...imports].sort((a, b) => a.replace(/^type /, "").localeCompare(b.replace(/^type /, "")));
  lines.push(`import { ${sorted.join(", ")} } from "thundering-herd/backoff";`, "", ...body);
  return {
    id: "thundering-herd",
    title: "thundering-herd/backoff (this project's library)",
    file: "thundering-herd.ts",
    language: "typescript",
    text: `${lines.join("\n")}\n`,
    notes: [...notes, ...unexpressed(intent, "the backoff library", [])],
  };
}

/** Every snippet for a winner; a winner that hedges gets gRPC's hedgingPolicy alone, the others' settings being retries. */
export function snippetsFor(intent: RetryIntent): Snippet[] {
  if (intent.hedgeDelayMs !== undefined) return [grpcServiceConfig(intent)];
  return [
    grpcServiceConfig(intent),
    envoyConfig(intent),
    awsSettings(intent),
    awsCode(intent),
    cockatielCode(intent),
    pRetryCode(intent),
    libraryCode(intent),
  ];
}

/** A snippet as the terminal shows it: its title and file, its notes, its text. */
export function snippetText(snippet: Snippet): string {
  const notes = snippet.notes.map((note) => `  note: ${note}\n`).join("");
  return `--- ${snippet.title} (${snippet.file})\n${notes}${snippet.text}\n`;
}

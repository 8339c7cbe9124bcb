import {
  attemptsOf,
  meanWaits,
  mechanisms,
  ms,
  parameter,
  protoDuration,
  type RetryIntent,
  round3,
  shapeOf,
  type Snippet,
  type SnippetRenderer,
  unexpressed,
} from "./shared.ts";

/*
 * gRPC's service config, from proposal A6, "gRPC Retry Design",
 * https://github.com/grpc/proposal/blob/master/A6-client-retries.md (retryPolicy: maxAttempts >= 2,
 * values above 5 treated as 5; initialBackoff, maxBackoff as "<seconds>s" strings > 0;
 * backoffMultiplier > 0; retryableStatusCodes non-empty; retryThrottling: maxTokens in (0, 1000],
 * tokenRatio > 0 with 3 decimal places; hedgingPolicy: maxAttempts >= 2, values above 5 treated as
 * 5, hedgingDelay, nonFatalStatusCodes; a method has a retryPolicy or a hedgingPolicy, never both).
 * Retry n waits min(initialBackoff x backoffMultiplier^(n-1), maxBackoff) x random(0.8, 1.2) since
 * A6's revision of August 2024 (before it, random(0, that backoff)); grpc-js since June 2025
 * (grpc/grpc-node#2960).
 */

/** gRPC treats maxAttempts above this as this (A6). */
export const GRPC_MAX_ATTEMPTS = 5;
/** gRPC's retry jitter, ±20 % of the backoff (A6). */
const GRPC_JITTER = 0.2;

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

function grpcServiceConfig(intent: RetryIntent): Snippet {
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
    if (!(form.jitter === "spread" && form.spread === GRPC_JITTER)) {
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

export const grpcRenderer: SnippetRenderer = { id: "grpc", writesHedging: true, render: grpcServiceConfig };

import { argsToSettings, type FlagSpec, parseValue } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";

/*
 * Presets: what real systems ship, as combinations of a backoff strategy, an attempt limit
 * and a fleet-level protection, under one name that the demo and the simulator accept in
 * -strategies. A preset is nothing but client flags, so the demo runs it with the real
 * ./client exactly as a person would type it; the registry (registry.ts) lists presets
 * beside the strategies. Each default below is checked against the source named, and
 * where a source gives no default (gRPC's retry policy has none) the choice is said.
 */
export interface PresetDefinition {
  readonly name: string;
  readonly summary: string;
  /** Where each value comes from. */
  readonly source: string;
  /** The client flags it stands for; `-strategy` comes first. */
  readonly args: readonly string[];
}

export const PRESETS = [
  {
    name: "grpc-throttled",
    summary: "gRPC retries: U(0, min(100ms x 2^(n-1), 1s)), at most 5 attempts, retry throttling (10 tokens, ratio 0.1)",
    source:
      "grpc/proposal A6-client-retries.md as written until 2024: the retry backoff is random(0, min(initialBackoff x " +
      "multiplier^(n-1), maxBackoff)), which is full jitter with multiplier 2, and which grpc-js (Node) did until June 2025 " +
      "(grpc/grpc-node#2959, fixed by #2960); A6's 2024 revision (grpc/proposal#452), in grpc-go, grpc-java and grpc-js since, waits that delay x " +
      "random(0.8, 1.2) instead. A6 gives no defaults, so the values are its example's (0.1s, 1s, 2), with " +
      "maxAttempts at A6's client-side ceiling of 5 and retryThrottling at its example's maxTokens 10, tokenRatio 0.1",
    args: ["-strategy", "full-jitter", "-min-delay", "100ms", "-max-delay", "1s", "-max-attempts", "5", "-budget", "grpc"],
  },
  {
    name: "envoy-budget",
    summary: "Envoy's retries: 1 retry after U(0, 25ms), retry budget 20 % of requests in progress, at least 3",
    source:
      "Envoy router docs (x-envoy-max-retries: 1 retry by default; fully jittered backoff, base 25ms: the 1st retry waits " +
      "0-24ms, the 2nd 0-74ms, ...; max_interval 10 x base) and circuit_breaker.proto RetryBudget (budget_percent 20 %, " +
      "min_retry_concurrency 3). With one retry only the first wait matters, where full jitter and Envoy's (2^n - 1) x base agree",
    args: ["-strategy", "full-jitter", "-min-delay", "25ms", "-max-delay", "250ms", "-max-attempts", "2", "-budget", "envoy"],
  },
  {
    name: "aws-standard",
    summary: "AWS SDK standard mode since November 2026: U(0, min(50ms x 2^(n-1), 20s)), 3 attempts, quota 500, a retry 14 tokens",
    source:
      'AWS Developer Tools Blog, "Announcing updated retry behavior for AWS SDKs and Tools" (May 2026) and "Updated default ' +
      'retry behavior for AWS SDKs and tools" (default from November 10, 2026); AWS SDKs and Tools Reference Guide, "Retry ' +
      'behavior"; aws-sdk-java-v2 retries constants (Standard: BASE_DELAY 50 ms, MAX_BACKOFF 20 s, MAX_ATTEMPTS 3, ' +
      "INITIAL_RETRY_TOKENS 500, RETRY_COST 14, THROTTLING_RETRY_COST 5); aws-sdk-go-v2 PR 3400: timeouts no longer cost more. " +
      "Not modelled: throttling errors' own 1 s base and 5-token cost (every failure here is a transient one), x-amz-retry-after",
    args: [
      "-strategy",
      "full-jitter",
      "-min-delay",
      "50ms",
      "-max-delay",
      "20s",
      "-max-attempts",
      "3",
      "-budget",
      "aws",
      "-budget-retry-cost",
      "14",
      "-budget-timeout-cost",
      "14",
    ],
  },
  {
    name: "aws-standard-pre-2026",
    summary: "AWS SDK standard mode before November 2026: U(0, min(100ms x 2^(n-1), 20s)), 3 attempts, retry quota of 500 tokens",
    source:
      'AWS SDKs and Tools Reference Guide, "Retry behavior" (standard mode: 3 attempts, 20 s maximum backoff); aws-sdk-js-v3 ' +
      "util-retry: DEFAULT_RETRY_DELAY_BASE 100 ms, delay = random x 2^retryCount x base capped at MAXIMUM_RETRY_DELAY 20 s " +
      "(retryCount 0 for the first retry), INITIAL_RETRY_TOKENS 500, RETRY_COST 5, TIMEOUT_RETRY_COST 10, NO_RETRY_INCREMENT 1",
    args: ["-strategy", "full-jitter", "-min-delay", "100ms", "-max-delay", "20s", "-max-attempts", "3", "-budget", "aws"],
  },
  {
    name: "sre-throttle",
    summary: "the article's exponential backoff behind Google SRE's client-side adaptive throttling (K = 2, 2 minutes)",
    source:
      'Google, Site Reliability Engineering, ch. 21 "Handling Overload" (K = 2, the last two minutes); the book prescribes ' +
      "no backoff, so the article's exponential formula is kept, to show what the throttle adds to it",
    args: ["-strategy", "exponential", "-throttle", "sre"],
  },
  {
    name: "breaker",
    summary: "cockatiel-style retry (decorrelated jitter from 128ms, up to 30s) around a breaker: 5 failures in a row, 5s open",
    source:
      "cockatiel: ExponentialBackoff defaults (decorrelated jitter, initialDelay 128 ms, maxDelay 30 s, no attempt limit), " +
      "approximated with AWS's decorrelated jitter; ConsecutiveBreaker(5) as in its README; break 5 s, Polly v8's default " +
      "BreakDuration (cockatiel's halfOpenAfter has no default)",
    args: ["-strategy", "decorrelated-jitter", "-min-delay", "128ms", "-max-delay", "30s", "-breaker", "consecutive"],
  },
] as const satisfies readonly PresetDefinition[];

export type PresetName = (typeof PRESETS)[number]["name"];

export const PRESET_NAMES: readonly PresetName[] = PRESETS.map((preset) => preset.name);

export function findPreset(name: string): PresetDefinition | undefined {
  return PRESETS.find((preset) => preset.name === name);
}

/** The backoff strategy a preset selects (its `-strategy`). */
export function presetStrategy(preset: PresetDefinition): string {
  return preset.args[preset.args.indexOf("-strategy") + 1]!;
}

/**
 * The one reading of a preset's flags: flag name to value as typed (`"full-jitter"`, `"100ms"`,
 * a bare boolean as `"true"`), read from its `args` by the command line's own rules against
 * a program's flag table. Throws if the preset names a flag the table lacks.
 */
export function presetSettings(preset: PresetDefinition, flags: readonly FlagSpec[]): Record<string, string> {
  try {
    return argsToSettings(preset.args, flags);
  } catch (error) {
    if (error instanceof UsageError) throw new Error(`preset ${preset.name}: ${error.message}`);
    throw error;
  }
}

/** A preset's flags as parsed values, against a program's flag table. */
export function presetValues(preset: PresetDefinition, flags: readonly FlagSpec[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(presetSettings(preset, flags)).map(([name, raw]) => [
      name,
      parseValue(
        flags.find((flag) => flag.name === name)!,
        raw,
      ),
    ]),
  );
}

/** Help text listing every preset, its flags and its sources. */
export function presetsHelp(): string {
  return PRESETS.map(
    (preset) => `  ${preset.name}: ${preset.summary}\n      flags: ${preset.args.join(" ")}\n      source: ${preset.source}\n`,
  ).join("");
}

import type { BackoffPolicy } from "../../backoff/policy.ts";
import { policyDefinition } from "../../backoff/policies.ts";
import { goDuration, round3, type WaitShape } from "../../backoff/policies/wait-shape.ts";
import type { RetryBudget } from "../../backoff/budget.ts";
import type { RetryConfig } from "../../model/client-loop.ts";
import type { FlagSettings } from "../settings.ts";

/*
 * What every snippet target shares: the winner as simulated (RetryIntent), its waits as the
 * first wait x multiplier^(n-1), capped, that most systems speak (shapeOf), their means,
 * durations as the targets write them, the notes for what a system cannot say, and the
 * winner's waits as a JavaScript expression for the targets that are code. Each target's own
 * mapping is its file beside this one, listed in SNIPPET_RENDERERS (src/recommend/snippets.ts).
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

/** One system the winner's settings are written for: a file of src/recommend/snippets/, listed in SNIPPET_RENDERERS. */
export interface SnippetRenderer {
  /** The id of the snippet it writes. */
  readonly id: Snippet["id"];
  /** Whether it writes a winner that hedges; a winner that hedges gets only these, the others writing retries. */
  readonly writesHedging: boolean;
  /** The winner's settings in this system's words, with notes for what it cannot say. */
  render(intent: RetryIntent): Snippet;
}

/** A finite number of attempts for systems that need one when the winner has no limit. */
export const UNLIMITED_STANDIN = 10;

/** The winner's waits as first wait × multiplier^(n-1), capped: the shape most systems speak (its policy's own). */
export function shapeOf(intent: RetryIntent): WaitShape {
  return policyDefinition(intent.policy.kind).waitShape(intent.policy, intent);
}

export const attemptsOf = (intent: RetryIntent, form: WaitShape) => Math.min(intent.maxAttempts, form.policyAttempts);

/**
 * The winner's mean first wait, and its mean wait once capped: the cap scaled as the first wait
 * is (a half for full jitter, three quarters for equal jitter). gRPC waits the current backoff
 * times a uniform 0.8 to 1.2 (A6 since its 2024 revision, and grpc-js), so these are its
 * backoffs; p-retry's waits stop at maxTimeout exactly once capped.
 */
export function meanWaits(form: WaitShape): { readonly initialMs: number; readonly maxMs: number } {
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
export const ms = goDuration;

/** A protobuf JSON duration: seconds with up to 9 decimals and an "s", at least 1 ms here. */
export function protoDuration(valueMs: number): string {
  const seconds = Math.max(1, Math.round(valueMs)) / 1000;
  return `${Number(seconds.toFixed(9))}s`;
}

export { round3 };

/** Mechanism flags the simulation had that a system may or may not express. */
export function mechanisms(intent: RetryIntent): { budget?: string; throttle?: string; breaker?: string } {
  const found: { budget?: string; throttle?: string; breaker?: string } = {};
  for (const name of ["budget", "throttle", "breaker"] as const) {
    const value = intent.client[name];
    if (value !== undefined && value !== "" && value !== "off" && value !== "none") found[name] = value;
  }
  return found;
}

/** A mechanism's numeric parameter, looked up by a fragment of its flag name (e.g. "percent"). */
export function parameter(intent: RetryIntent, prefix: string, fragment: string): number | undefined {
  for (const [name, value] of Object.entries(intent.client)) {
    if (name.startsWith(`${prefix}-`) && name.includes(fragment)) {
      const number = Number.parseFloat(value);
      if (Number.isFinite(number)) return number;
    }
  }
  return undefined;
}

export function unexpressed(intent: RetryIntent, system: string, except: readonly string[]): string[] {
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

/** The winner's wait for retry number `attempt` (1-based) as a JavaScript expression (its policy's own). */
export function waitExpression(intent: RetryIntent, attempt: string): string {
  return policyDefinition(intent.policy.kind).waitExpression(intent.policy, attempt, intent);
}

export const NORMAL_HELPER = [
  "/** A standard normal draw (Box-Muller), for the winner's normal jitter. */",
  "function normal(): number {",
  "  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());",
  "}",
];

export const needsNormal = (intent: RetryIntent) => policyDefinition(intent.policy.kind).drawsNormal;

export function comment(notes: readonly string[]): string[] {
  return notes.map((note) => `// Note: ${note}.`);
}

import type { BackoffPolicy } from "../../backoff/policy.ts";
import type { RetryBudget } from "../../backoff/budget.ts";
import type { RetryConfig } from "../../model/client-loop.ts";
import type { FlagSettings } from "../settings.ts";

/*
 * What every snippet target shares: the winner as simulated (RetryIntent), its waits as the
 * first wait x multiplier^(n-1), capped, that most systems speak (shapeOf), their means,
 * durations as the targets write them, the notes for what a system cannot say, and the
 * winner's waits as a JavaScript expression for the targets that are code. Each target's own
 * mapping is its file beside this one, listed in SNIPPET_RENDERERS (src/choose/snippets.ts).
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

/** One system the winner's settings are written for: a file of src/choose/snippets/, listed in SNIPPET_RENDERERS. */
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

export function shapeOf(intent: RetryIntent): Shape {
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

export const attemptsOf = (intent: RetryIntent, form: Shape) => Math.min(intent.maxAttempts, form.policyAttempts);

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
export function meanWaits(form: Shape): { readonly initialMs: number; readonly maxMs: number } {
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
export function ms(value: number): string {
  if (value >= 1000) return `${Number((value / 1000).toPrecision(6))}s`;
  return `${Number(value.toPrecision(6))}ms`;
}

/** A protobuf JSON duration: seconds with up to 9 decimals and an "s", at least 1 ms here. */
export function protoDuration(valueMs: number): string {
  const seconds = Math.max(1, Math.round(valueMs)) / 1000;
  return `${Number(seconds.toFixed(9))}s`;
}

export const round3 = (value: number) => Number(value.toFixed(3));

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

/** The winner's wait for retry number `attempt` (1-based) as a JavaScript expression. */
export function waitExpression(intent: RetryIntent, attempt: string): string {
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

export const NORMAL_HELPER = [
  "/** A standard normal draw (Box-Muller), for the winner's normal jitter. */",
  "function normal(): number {",
  "  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());",
  "}",
];

export const needsNormal = (intent: RetryIntent) => intent.policy.kind === "exponential" || intent.policy.kind === "reference";

export function comment(notes: readonly string[]): string[] {
  return notes.map((note) => `// Note: ${note}.`);
}

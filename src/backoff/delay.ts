import type { Random } from "./random.ts";
import type { BackoffPolicy, TablePolicy } from "./policy.ts";

/** Google's recipe: the first retry waits 1 s, and each later one doubles it. */
const GOOGLE_FIRST_WAIT_MS = 1000;
/** Google's recipe: "random_number_milliseconds ... less than or equal to 1000". */
const GOOGLE_MAX_JITTER_MS = 1000;
/** AWS's full, equal and decorrelated jitter double the ceiling per retry. */
const AWS_GROWTH = 2;
/** AWS's decorrelated jitter draws up to three times the previous wait. */
const DECORRELATED_SPREAD = 3;

/**
 * The wait in ms before retry number `attempt`, where `attempt` is the number of
 * consecutive failures so far (1 after the first failure; a success resets it).
 * `undefined` means "give up": only the google policy does that by itself.
 *
 * `previousDelayMs` is the wait that preceded the failed attempt (finite, >= 0), used by
 * the reference and decorrelated-jitter policies; pass `undefined` when there is none.
 * For the reference policy pass the client's think time before the first failure, then the
 * previous retry wait.
 *
 * `attempt` below 1 means no failure yet: the wait is 0, except for the table policy,
 * which returns its entry 0 as the Go `retryConn` loop does before its first attempt.
 *
 * Pure: the only effect is drawing from `random`. Policies are trusted (the factories
 * validate them), so this stays cheap enough for simulating millions of clients.
 */
export function nextDelay(policy: BackoffPolicy, attempt: number, previousDelayMs: number | undefined, random: Random): number | undefined {
  if (!(attempt >= 1)) return policy.kind === "table" ? tableWait(policy, 0, random) : 0;

  switch (policy.kind) {
    case "constant":
      return policy.delayMs;

    case "exponential": {
      const base = cappedGrowth(policy.minDelayMs, policy.factor, attempt, policy.maxDelayMs);
      return nonNegative(base + random.normal(0, policy.jitter * base));
    }

    case "reference": {
      const base = Math.min((previousDelayMs ?? policy.minDelayMs) * policy.factor, policy.maxDelayMs);
      return nonNegative(base + random.normal(0, policy.jitterMs));
    }

    case "table":
      return tableWait(policy, attempt, random);

    case "google":
      if (attempt > policy.maxRetries) return undefined;
      return GOOGLE_FIRST_WAIT_MS * 2 ** (attempt - 1) + random.uniformInt(GOOGLE_MAX_JITTER_MS + 1);

    case "full-jitter":
      return random.uniform() * cappedGrowth(policy.baseMs, AWS_GROWTH, attempt - 1, policy.capMs);

    case "equal-jitter": {
      const half = cappedGrowth(policy.baseMs, AWS_GROWTH, attempt - 1, policy.capMs) / 2;
      return half + random.uniform() * half;
    }

    case "decorrelated-jitter": {
      // Our own waits never exceed capMs; capping a foreign previous wait keeps 3 * previous
      // finite and does not change the result, which is capped anyway.
      const previous = Math.min(previousDelayMs ?? policy.baseMs, policy.capMs);
      // A previous wait below baseMs / 3 would invert the range; the AWS article assumes
      // previous >= baseMs, which its own waits guarantee.
      const high = Math.max(policy.baseMs, DECORRELATED_SPREAD * previous);
      return Math.min(policy.capMs, policy.baseMs + random.uniform() * (high - policy.baseMs));
    }

    case "grpc": {
      const base = cappedGrowth(policy.initialMs, policy.multiplier, attempt - 1, policy.maxMs);
      return base * (1 + policy.jitter * (2 * random.uniform() - 1));
    }
  }
}

/**
 * `min(startMs * growth^exponent, capMs)` for growth >= 1. For large exponents
 * growth^exponent overflows to Infinity; the comparison with the cap absorbs it, and a zero
 * start is answered first because 0 * Infinity is NaN.
 */
function cappedGrowth(startMs: number, growth: number, exponent: number, capMs: number): number {
  if (startMs === 0) return 0;
  const grown = startMs * growth ** exponent;
  return grown < capMs ? grown : capMs;
}

/** Go's `jitter(millis)`: integer ms uniform in [m/2, 1.5m), 0 for 0. */
function tableWait(policy: TablePolicy, attempt: number, random: Random): number {
  const table = policy.delaysMs;
  const index = Math.min(Math.floor(attempt), table.length - 1);
  const middleMs = table[index] ?? 0; // never undefined: tables are non-empty
  if (middleMs === 0) return 0;
  return Math.floor(middleMs / 2) + random.uniformInt(middleMs);
}

function nonNegative(ms: number): number {
  return ms > 0 ? ms : 0;
}

/**
 * What one attempt came to, from the client's side. The model knows HTTP statuses; the
 * real client maps its transport's error codes onto the same outcomes (src/runner/classify-error.ts).
 */
export type Outcome = "ok" | "error" | "timedout";

/**
 * An attempt the client refused itself, before sending it: "throttled" by an adaptive
 * throttle, "rejected" by an open circuit breaker. It costs the server nothing.
 */
export type LocalRefusal = "throttled" | "rejected";

/** What the retry loop sees of an attempt: its outcome, or that it was refused locally. */
export type AttemptOutcome = Outcome | LocalRefusal;

/** Why an attempt failed, for the per-kind counters of the JSON report. */
export type ErrorKind =
  | "refused"
  | "reset"
  | "closed"
  | "no-local-port"
  | "no-file-descriptor"
  | "unreachable"
  | "dns"
  | "http-4xx"
  | "http-5xx"
  | "http-other"
  | "body-too-large"
  | "other";

export interface AttemptResult {
  readonly outcome: Outcome;
  readonly errorKind?: ErrorKind;
  /** The wait the server asked for before the next attempt (a shed request's Retry-After), in ms. */
  readonly retryAfterMs?: number;
  /** A 429 (Too Many Requests, RFC 6585): a 4xx that is the server's load, not the request's fault (see isNonFatal). */
  readonly tooManyRequests?: true;
}

export const OK_RESULT: AttemptResult = Object.freeze({ outcome: "ok" });
export const TIMEDOUT_RESULT: AttemptResult = Object.freeze({ outcome: "timedout" });

/** A 429: counted with the 4xx, non-fatal to a hedged request. */
export const TOO_MANY_REQUESTS_RESULT: AttemptResult = Object.freeze({ outcome: "error", errorKind: "http-4xx", tooManyRequests: true });

export function classifyStatus(status: number): AttemptResult {
  if (status >= 200 && status < 300) return OK_RESULT;
  if (status === 429) return TOO_MANY_REQUESTS_RESULT;
  const errorKind: ErrorKind = status >= 500 && status < 600 ? "http-5xx" : status >= 400 ? "http-4xx" : "http-other";
  return { outcome: "error", errorKind };
}

/**
 * Whether a failure leaves a hedged request open (gRPC A6's nonFatalStatusCodes): a timeout,
 * a refused or reset connection, a 5xx and a 429 are, like UNAVAILABLE (gRPC's mapping of HTTP
 * statuses gives UNAVAILABLE for 429, 502, 503 and 504); any other 4xx is the request's own
 * fault, like INVALID_ARGUMENT, and ends it. The servers of this project shed load with 503.
 */
export function isNonFatal(result: AttemptResult): boolean {
  return result.errorKind !== "http-4xx" || result.tooManyRequests === true;
}

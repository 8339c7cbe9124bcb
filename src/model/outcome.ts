/**
 * What one attempt came to, from the client's side. The model knows HTTP statuses; the
 * real client maps its transport's error codes onto the same outcomes (src/client/classify-error.ts).
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
  | "other";

export interface AttemptResult {
  readonly outcome: Outcome;
  readonly errorKind?: ErrorKind;
  /** The wait the server asked for before the next attempt (a shed request's Retry-After), in ms. */
  readonly retryAfterMs?: number;
}

export const OK_RESULT: AttemptResult = Object.freeze({ outcome: "ok" });
export const TIMEDOUT_RESULT: AttemptResult = Object.freeze({ outcome: "timedout" });

export function classifyStatus(status: number): AttemptResult {
  if (status >= 200 && status < 300) return OK_RESULT;
  const errorKind: ErrorKind = status >= 500 && status < 600 ? "http-5xx" : status >= 400 ? "http-4xx" : "http-other";
  return { outcome: "error", errorKind };
}

/**
 * Whether a failure leaves a hedged request open (gRPC A6's nonFatalStatusCodes): a timeout,
 * a refused or reset connection and a 5xx are, like UNAVAILABLE; a 4xx is the request's own
 * fault, like INVALID_ARGUMENT, and ends it. The servers of this project shed load with 503.
 */
export function isNonFatal(result: AttemptResult): boolean {
  return result.errorKind !== "http-4xx";
}

import { Agent } from "undici";
import type { Transport } from "../model/attempt.ts";
import { classifyError, isClientLimit } from "./classify-error.ts";
import { type AttemptResult, classifyStatus } from "../model/outcome.ts";
import { parseRetryAfter } from "../backoff/retry-after.ts";
import { DEADLINE_HEADER, formatDeadline } from "../model/protection-headers.ts";
import type { DeadlineCarrier } from "../model/upstream-calls.ts";
import { DEFAULT_MAX_BODY_BYTES, readBodyToEnd } from "../runtime/http-body.ts";

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export interface HttpTransport extends Transport<AbortController> {
  /** Destroys every connection. */
  close(): Promise<void>;
}

/**
 * One undici GET per attempt. No connection cap (each attempt in flight may hold its own
 * connection, as the reference client's net/http does); idle connections are reused.
 * Our own deadline (the herd's timeout) aborts the request, which makes undici destroy
 * its connection. undici's own timeouts are set past our deadline so they never decide,
 * except the connect timeout, which bounds a connect that the server's full accept queue
 * leaves hanging. An attempt succeeds only when its whole body arrived, at most `maxBodyBytes`
 * (counted, never kept): a broken or cut-short body is the transport's error, a longer one
 * "body-too-large", whatever the status said.
 */
export function createHttpTransport(
  url: string,
  timeoutMs: number,
  options: { propagateDeadline?: boolean; carryDeadlines?: boolean; maxBodyBytes?: number } = {},
): HttpTransport {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const target = new URL(url);
  const agent = new Agent({
    connections: null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connect: { timeout: Math.max(timeoutMs, 1) },
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const path = `${target.pathname}${target.search}`;
  return {
    send(sink) {
      const controller = new AbortController();
      // Once aborted, the attempt is over for the herd: the rejection that follows is not reported.
      const done = (result: AttemptResult) => {
        if (!controller.signal.aborted) sink.done(result);
      };
      // The deadline is the herd's: it armed this attempt's timeout just before sending.
      const headers =
        options.carryDeadlines === true
          ? carriedDeadlineHeaders(sink as Partial<DeadlineCarrier>, options.propagateDeadline === true ? Date.now() + timeoutMs : Infinity)
          : options.propagateDeadline === true
            ? { [DEADLINE_HEADER]: formatDeadline(Date.now() + timeoutMs) }
            : NO_HEADERS;
      agent.request({ origin: target.origin, path, method: "GET", signal: controller.signal, headers }).then(
        async (response) => {
          const status = withRetryAfter(classifyStatus(response.statusCode), response.headers["retry-after"]);
          try {
            await readBodyToEnd(response.body, maxBodyBytes, response.headers["content-length"]);
          } catch (error) {
            // An error status stands (with its Retry-After); a success is one only with its whole body.
            done(status.outcome === "ok" ? classifyError(error) : status);
            return;
          }
          done(status);
        },
        (error: unknown) => {
          const result = classifyError(error);
          // No descriptor or local port: the request never left this machine. Not the server's failure.
          if (isClientLimit(result)) {
            if (!controller.signal.aborted) sink.notSent();
          } else {
            done(result);
          }
        },
      );
      return controller;
    },
    abort(controller) {
      controller.abort();
    },
    close: () => agent.destroy(),
  };
}

/**
 * A middle tier's deadline header: the earlier of the deadline its request brought (the
 * sink's, carried down) and the attempt's own (`ownEpochMs`, Infinity when it sends none).
 */
function carriedDeadlineHeaders(sink: Partial<DeadlineCarrier>, ownEpochMs: number): Readonly<Record<string, string>> {
  const deadline = Math.min(sink.carriedDeadline ?? Infinity, ownEpochMs);
  return Number.isFinite(deadline) ? { [DEADLINE_HEADER]: formatDeadline(deadline) } : NO_HEADERS;
}

/** A failed attempt's result with the wait its Retry-After asks for, if the server sent one. */
function withRetryAfter(result: AttemptResult, header: string | string[] | undefined): AttemptResult {
  if (result.outcome === "ok" || header === undefined) return result;
  const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
  return retryAfterMs === undefined ? result : { ...result, retryAfterMs };
}

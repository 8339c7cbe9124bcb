import { Socket } from "node:net";
import type { buildConnector } from "undici";
import { onFirstUse } from "../runtime/on-first-use.ts";
import type { Transport } from "../model/attempt.ts";
import { classifyError, isClientLimit } from "./classify-error.ts";
import { type AttemptResult, classifyStatus } from "../model/outcome.ts";
import { parseRetryAfter } from "../backoff/retry-after.ts";
import { DEADLINE_HEADER, formatDeadline } from "../model/protection-headers.ts";
import type { DeadlineCarrier } from "../model/upstream-calls.ts";
import { DEFAULT_MAX_BODY_BYTES, readBodyToEnd } from "../runtime/http-body.ts";

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

const undici = onFirstUse<typeof import("undici")>("undici");

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
 * leaves hanging; an attempt aborted while connecting ends its connect at once
 * (`connectsEndingWithTheirAttempt`). An attempt succeeds only when its whole body arrived,
 * at most `maxBodyBytes` (counted, never kept): a broken or cut-short body is the transport's
 * error, a longer one "body-too-large", whatever the status said.
 */
export function createHttpTransport(
  url: string,
  timeoutMs: number,
  options: { propagateDeadline?: boolean; carryDeadlines?: boolean; maxBodyBytes?: number } = {},
): HttpTransport {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const target = new URL(url);
  const connects = connectsEndingWithTheirAttempt(Math.max(timeoutMs, 1));
  const agent = new (undici().Agent)({
    connections: null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connect: connects.connect,
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
      connects
        .openedFor(controller, () => agent.request({ origin: target.origin, path, method: "GET", signal: controller.signal, headers }))
        .then(
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
      connects.end(controller);
      controller.abort();
    },
    close: () => agent.destroy(),
  };
}

/**
 * undici lets the connect of a request it aborted run on until its own connect timeout, a
 * coarse timer that fires up to half a second late. The kernel sends an unanswered SYN again
 * 1 s after the first, so with a 1 s timeout that SYN could still open a connection for a user
 * who had left: on a full listen queue, let in by SYN cookies, it brought the server work for
 * nobody and kept it down for tens of seconds (docs/real-services.md). An attempt's timeout ends
 * the attempt, its connect included. undici opens a connection inside `request()` when it needs
 * one (its pool adds a client per request in flight, and a client connects as it is handed the
 * request), so the attempt sending is the one the connect is for; a connect opened at another
 * time has no attempt and keeps undici's own timeout.
 */
function connectsEndingWithTheirAttempt(connectTimeoutMs: number) {
  // Its socket is the connector's return value, which its type does not declare: checked below.
  const connector = undici().buildConnector({ timeout: connectTimeoutMs }) as (...args: Parameters<buildConnector.connector>) => unknown;
  const connecting = new WeakMap<AbortController, Socket>();
  let sending: AbortController | undefined;
  return {
    connect: ((options, callback) => {
      const socket = connector(options, callback);
      if (sending !== undefined && socket instanceof Socket) connecting.set(sending, socket);
      return socket;
    }) as buildConnector.connector,
    /** Sends the attempt (`send` calls undici's `request()`), owning any connect opened meanwhile. */
    openedFor<T>(attempt: AbortController, send: () => T): T {
      sending = attempt;
      try {
        return send();
      } finally {
        sending = undefined;
      }
    },
    /** Ends the attempt's connect if it is still under way; undici reports it to the aborted request, which is over. */
    end(attempt: AbortController) {
      const socket = connecting.get(attempt);
      if (socket?.connecting === true) socket.destroy(new ConnectEndedWithAttempt());
    },
  };
}

class ConnectEndedWithAttempt extends Error {
  readonly code = "THUNDERING_HERD_CONNECT_ENDED";
  constructor() {
    super("the attempt's timeout ended its connect");
  }
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

import { Socket } from "node:net";
import type { buildConnector, Client } from "undici";
import { onFirstUse } from "../runtime/on-first-use.ts";
import type { AttemptSink, Transport } from "../model/attempt.ts";
import { classifyError, isClientLimit } from "./classify-error.ts";
import { type AttemptResult, classifyStatus } from "../model/outcome.ts";
import { parseRetryAfter } from "../backoff/retry-after.ts";
import { DEADLINE_HEADER, formatDeadline } from "../model/protection-headers.ts";
import type { DeadlineCarrier } from "../model/upstream-calls.ts";
import { BodyTooLargeError, DEFAULT_MAX_BODY_BYTES } from "../runtime/http-body.ts";

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

const undici = onFirstUse<typeof import("undici")>("undici");

export interface HttpTransport extends Transport<HttpAttempt> {
  /** Destroys every connection. */
  close(): Promise<void>;
}

/** What every attempt of one transport reads: its cap on a body, its connections, and how it ends a connect under way. */
interface AttemptSettings {
  readonly maxBodyBytes: number;
  readonly connections: Connections;
  readonly connects: ReturnType<typeof connectsEndingWithTheirAttempt>;
}

/**
 * The transport's connections, an undici Client each (one request at a time): an attempt takes
 * the one freed last, or a new one when every one is busy (no cap, as before), and gives it back
 * once its request ended. undici's own pool looks for a free client by walking all of them for
 * each request; with a thousand in flight that walk took a third of a thread's time as the
 * client started 100 000 users, and the lag it caused put more in flight (BENCHMARKS.md).
 */
class Connections {
  private readonly free: Client[] = [];
  private readonly every = new Set<Client>();
  private readonly origin: string;
  private readonly options: Client.Options;

  constructor(origin: string, options: Client.Options) {
    this.origin = origin;
    this.options = options;
  }

  take(): Client {
    const free = this.free.pop();
    if (free !== undefined) return free;
    const client = new (undici().Client)(this.origin, this.options);
    this.every.add(client);
    return client;
  }

  /** A client whose request ended; it connects again by itself if its connection closed. */
  give(client: Client): void {
    if (!client.destroyed && !client.closed) this.free.push(client);
  }

  /**
   * A client whose request was aborted on the wire: undici still holds the request as its
   * connection closes, puts it back in the client's queue and connects again for it, a connect no
   * attempt owns (connectsEndingWithTheirAttempt) whose timer runs from the abort. An attempt given
   * that client would go out on that connect: so it is not given to one, but ended.
   */
  discard(client: Client): void {
    this.every.delete(client);
    void client.destroy();
  }

  async close(): Promise<void> {
    await Promise.all([...this.every].map((client) => client.destroy()));
  }
}

/**
 * One attempt on the wire, and undici's handler for it (its dispatch API: callbacks, no
 * promise, no stream, no AbortController: a request costs one object of ours). Aborted by
 * the herd (its timeout), it reports nothing more; undici learns of the abort as soon as it
 * has the request in hand (onConnect), as its own request() does.
 */
export class HttpAttempt {
  private abortRequest: ((reason: Error) => void) | undefined = undefined;
  private aborted = false;
  /** Whether this side aborted the request (the herd's timeout, a body past the cap): its client is not reused. */
  private abortedHere = false;
  /** Whether the sink has its result: undici calls onError after an onComplete that threw, which must not report twice. */
  private reported = false;
  /** The connection the request went out on, given back when it ends. */
  client: Client | undefined = undefined;
  /** The answer's status, once its headers arrived; its body is still to come whole. */
  private status: AttemptResult | undefined = undefined;
  private bytes = 0;
  private readonly sink: AttemptSink;
  private readonly settings: AttemptSettings;

  constructor(sink: AttemptSink, settings: AttemptSettings) {
    this.sink = sink;
    this.settings = settings;
  }

  /** The herd's abort: the attempt is over, its connect ended and its request aborted. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.settings.connects.end(this);
    this.abortHere(new (undici().errors.RequestAbortedError)());
  }

  onConnect(abort: (reason: Error) => void): void {
    this.abortRequest = abort;
    if (this.aborted) this.abortHere(new (undici().errors.RequestAbortedError)());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // An informational answer (1xx) comes before the real one.
    if (statusCode < 200) return true;
    const status = classifyStatus(statusCode);
    this.status = status.outcome === "ok" ? status : withRetryAfter(status, headerOf(rawHeaders, "retry-after"));
    if (Number(headerOf(rawHeaders, "content-length")) > this.settings.maxBodyBytes) {
      this.abortHere(new BodyTooLargeError(this.settings.maxBodyBytes));
    }
    return true;
  }

  /** The body is counted, never kept; past the cap the request is aborted, which destroys its connection. */
  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > this.settings.maxBodyBytes) this.abortHere(new BodyTooLargeError(this.settings.maxBodyBytes));
    return true;
  }

  onComplete(): void {
    this.report(this.status!);
  }

  onError(error: Error): void {
    // An error status stands (with its Retry-After); a success is one only with its whole body.
    const status = this.status;
    this.report(status !== undefined && status.outcome !== "ok" ? status : classifyError(error));
  }

  /**
   * The result to the sink, once, unless the herd aborted the attempt; then the connection to the free
   * ones (after the sink, whose next attempt, sent from within, takes another). A throw of the sink's
   * is thrown again outside undici, which would take it for the request's error.
   */
  private report(result: AttemptResult): void {
    if (this.reported) return;
    this.reported = true;
    try {
      if (this.aborted) return;
      // No descriptor or local port: the request never left this machine. Not the server's failure.
      if (this.status === undefined && isClientLimit(result)) this.sink.notSent();
      else this.sink.done(result);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    } finally {
      if (this.client !== undefined) {
        if (this.abortedHere) this.settings.connections.discard(this.client);
        else this.settings.connections.give(this.client);
      }
    }
  }

  /** Aborts the request where undici holds it; before undici has it (onConnect), the herd's abort waits there. */
  private abortHere(reason: Error): void {
    if (this.abortRequest === undefined) return;
    this.abortedHere = true;
    this.abortRequest(reason);
  }

  onUpgrade(): void {
    throw new Error("an attempt is a GET: it never upgrades its connection");
  }
}

/** The first value of a header among undici's raw headers (name, value, …), its name in lower case. */
function headerOf(rawHeaders: readonly Buffer[], name: string): string | undefined {
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const key = rawHeaders[index]!;
    if (key.length === name.length && key.toString("latin1").toLowerCase() === name) return rawHeaders[index + 1]!.toString("latin1");
  }
  return undefined;
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
  const target = new URL(url);
  const connects = connectsEndingWithTheirAttempt(Math.max(timeoutMs, 1));
  const connections = new Connections(target.origin, {
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connect: connects.connect,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const settings: AttemptSettings = { maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, connections, connects };
  const path = `${target.pathname}${target.search}`;
  return {
    send(sink) {
      const attempt = new HttpAttempt(sink, settings);
      // The deadline is the herd's: it armed this attempt's timeout just before sending.
      const headers =
        options.carryDeadlines === true
          ? carriedDeadlineHeaders(sink as Partial<DeadlineCarrier>, options.propagateDeadline === true ? Date.now() + timeoutMs : Infinity)
          : options.propagateDeadline === true
            ? { [DEADLINE_HEADER]: formatDeadline(Date.now() + timeoutMs) }
            : NO_HEADERS;
      const client = connections.take();
      attempt.client = client;
      connects.openedFor(attempt, () => client.dispatch({ path, method: "GET", headers }, attempt));
      return attempt;
    },
    abort(attempt) {
      attempt.abort();
    },
    close: () => connections.close(),
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
  const connecting = new WeakMap<HttpAttempt, Socket>();
  let sending: HttpAttempt | undefined;
  return {
    connect: ((options, callback) => {
      const socket = connector(options, callback);
      if (sending !== undefined && socket instanceof Socket) connecting.set(sending, socket);
      return socket;
    }) as buildConnector.connector,
    /** Sends the attempt (`send` calls undici's `request()`), owning any connect opened meanwhile. */
    openedFor<T>(attempt: HttpAttempt, send: () => T): T {
      sending = attempt;
      try {
        return send();
      } finally {
        sending = undefined;
      }
    },
    /** Ends the attempt's connect if it is still under way; undici reports it to the aborted request, which is over. */
    end(attempt: HttpAttempt) {
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

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { formatListenAddress, type ListenAddress } from "../cli/listen-address.ts";
import type { Clock } from "../clock/clock.ts";
import { seededRandom, streamRandom } from "../backoff/random.ts";
import { DEADLINE_HEADER, parseDeadline, retryAfterSeconds } from "../model/protection-headers.ts";
import type { Completion, OutOfMemoryEvent, ServiceSnapshot } from "../model/service-queue.ts";
import type { ServerModelFigures } from "../model/servers/figures.ts";
import { type CommonServerOptions, createServerModel } from "../model/servers/models.ts";
import { createUpstreamTier } from "./upstream.ts";
import type { ServerModel } from "../model/servers/server-model.ts";
import { respondWithMetrics } from "../runtime/metrics-endpoint.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { metricsContentType, type ServerMetrics, serverMetrics } from "./metrics.ts";
import { serverModelOf } from "../config/server-system.ts";
import { type ServerOptions, serverFigures } from "../options/server.ts";
import { serverLine } from "../contracts/server-line-writer.ts";
import { type ActiveFault, conditionsOfActive } from "../model/faults/control.ts";

export interface RunningServer {
  readonly address: ListenAddress;
  /** The server model behind GET /api (the name from when there was one: the service queue). */
  readonly queue: ServerModel;
  /** Its capacity and tipping point, for the client's default timeout. */
  readonly figures: ServerModelFigures;
  /** Client connections open now. */
  readonly openConnections: () => number;
  /** The faults set through the fault control (-admin-listen), and setting them; undefined without the control. */
  readonly activeFaults: () => readonly ActiveFault[] | undefined;
  setFaults(active: readonly ActiveFault[]): void;
  /** Stops accepting, drops every connection and the model's timer. */
  close(): Promise<void>;
  /** Its series, with -metrics. */
  readonly metrics: ServerMetrics | undefined;
}

export interface ServerHooks {
  /** Called with a one-line description of a server-level problem (EMFILE, …). */
  onProblem?: (message: string) => void;
  /**
   * Called once when the model runs out of memory (-max-in-service): the caller stops the
   * server, as V8 stops a Node server whose heap is full. The request that found no room
   * has its connection closed.
   */
  onOutOfMemory?: (event: OutOfMemoryEvent) => void;
  now?: () => number;
  /** GET /stats's snapshot when this process is one of a server's (-workers): the whole server's. */
  stats?: () => Promise<ServiceSnapshot>;
  /** With -metrics, GET /metrics's text when this process is one of a server's (-workers): the whole server's series. */
  metricsText?: () => Promise<string>;
}

/** Connection-level errors that only mean a peer went away; never worth a report. */
const PEER_GONE_CODES = new Set(["ECONNRESET", "EPIPE", "ECANCELED", "ERR_STREAM_DESTROYED"]);

/**
 * The HTTP shell around the service model: routes, the listen backlog, and wiring each
 * GET /api to a server model's ticket. Nothing here decides latency.
 */
export async function startHttpServer(options: ServerOptions, clock: Clock, hooks: ServerHooks = {}): Promise<RunningServer> {
  const seed = options.seed ?? randomSeed();
  const spec = serverModelOf(options);
  const modelOptions = commonModelOptions(options, seed);
  // The deadline each request brought (epoch ms), for a middle tier to carry down.
  const broughtDeadline = new WeakMap<ServerResponse, number>();
  const upstreamTier =
    options.upstream === undefined
      ? undefined
      : createUpstreamTier(options.upstream, spec, clock, modelOptions, streamRandom(seed, 2), (response) =>
          broughtDeadline.get(response as ServerResponse),
        );
  const queue = upstreamTier?.pool ?? createServerModel(spec, clock, modelOptions);
  const figures = serverFigures(options);
  const connections = { open: 0 };
  // With the fault control on, the faults it set (none at first); without it, nothing is said of faults anywhere.
  let activeFaults: readonly ActiveFault[] | undefined = options.adminListen === undefined ? undefined : [];
  const metrics = options.metrics
    ? serverMetrics(
        queue,
        figures.overloadAbove,
        () => connections.open,
        () => activeFaults,
      )
    : undefined;
  const context = requestContext(options, clock, hooks, {
    queue,
    metrics,
    activeFaults: () => activeFaults,
    broughtDeadline: upstreamTier === undefined ? undefined : broughtDeadline,
  });
  const server = httpServer(options, context, connections);
  await listen(server, options.listen, options.backlog);
  // After listening, accept errors (EMFILE, ENFILE) are reported; the server keeps listening.
  server.on("error", (error: NodeJS.ErrnoException) => {
    hooks.onProblem?.(`accept: ${describeSystemError(error)}`);
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : options.listen.port;
  return {
    address: { host: options.listen.host, port },
    queue,
    figures,
    openConnections: () => connections.open,
    metrics,
    activeFaults: () => activeFaults,
    setFaults: (active) => {
      activeFaults = [...active];
      queue.setFaultConditions(conditionsOfActive(active));
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        queue.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await upstreamTier?.close();
    },
  };
}

/** What every server model takes from the flags: disconnects, the concurrency limit, injected errors, memory, its random source. */
function commonModelOptions(options: ServerOptions, seed: number): CommonServerOptions {
  return {
    cancelOnDisconnect: options.cancelOnDisconnect,
    maxConcurrency: options.maxConcurrency,
    // The fault control's errors fault draws from the same seeded source, so it needs one even at -error-rate 0.
    errorInjection:
      options.errorRate > 0 || options.adminListen !== undefined ? { rate: options.errorRate, random: seededRandom(seed) } : undefined,
    maxInService: options.maxInService ?? Infinity,
    serviceRandom: streamRandom(seed, 1),
  };
}

/** The request context of a server: its model, its series (-metrics), its faults, and how it answers. */
function requestContext(
  options: ServerOptions,
  clock: Clock,
  hooks: ServerHooks,
  parts: Pick<RequestContext, "queue" | "metrics" | "activeFaults" | "broughtDeadline">,
): RequestContext {
  const { metrics } = parts;
  let outOfMemoryTold = false;
  const outOfMemory = (event: OutOfMemoryEvent) => {
    if (outOfMemoryTold) return;
    outOfMemoryTold = true;
    hooks.onOutOfMemory?.(event);
  };
  const shedHeaders: Record<string, string> = { "content-type": "text/plain" };
  if (options.retryAfterMs > 0) shedHeaders["retry-after"] = String(retryAfterSeconds(options.retryAfterMs));
  const admittedAtMs = new WeakMap<ServerResponse, number>();
  const complete =
    metrics === undefined
      ? answer
      : (response: ServerResponse, completion: Completion) => {
          const admittedAt = admittedAtMs.get(response);
          if (completion === "served" && admittedAt !== undefined) metrics.observeServed((clock.now() - admittedAt) / 1000);
          answer(response, completion);
        };
  return {
    ...parts,
    now: hooks.now ?? Date.now,
    clock,
    shedHeaders,
    dropShed: options.shedWith === "drop",
    deadlineAware: options.deadlineAware,
    onOutOfMemory: outOfMemory,
    admittedAtMs,
    complete,
    stats: hooks.stats,
    metricsText: hooks.metricsText,
  };
}

/**
 * The HTTP server, not listening yet, counting its open connections in `connections`. Requests
 * in service may wait for hours or forever; only the time to receive a request head is bounded
 * (Node turns its own headers timeout off along with the request timeout).
 */
function httpServer(options: ServerOptions, context: RequestContext, connections: { open: number }): Server {
  const server = createServer(
    {
      requestTimeout: 0,
      headersTimeout: options.headersTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingIntervalMs(options.headersTimeoutMs),
      keepAliveTimeout: 5_000,
    },
    (request, response) => handleRequest(request, response, context),
  );
  server.on("clientError", answerClientError);
  // Without a listener Node drops a CONNECT request's connection without a word.
  server.on("connect", (_request: IncomingMessage, socket: Socket) => closeWithStatus(socket, "405 Method Not Allowed", "Allow: GET\r\n"));
  server.on("connection", (socket: Socket) => {
    connections.open++;
    socket.once("close", () => connections.open--);
  });
  return server;
}

/** What every request's handling shares. */
interface RequestContext {
  readonly queue: ServerModel;
  /** GET /stats's snapshot when not the queue's own (ServerHooks.stats). */
  readonly stats: (() => Promise<ServiceSnapshot>) | undefined;
  /** GET /metrics's text when not the registry's own (ServerHooks.metricsText). */
  readonly metricsText: (() => Promise<string>) | undefined;
  /** Epoch ms, for the reports and for deadlines. */
  readonly now: () => number;
  /** The queue's clock. */
  readonly clock: Clock;
  readonly shedHeaders: Readonly<Record<string, string>>;
  /** -shed-with drop: a shed request gets no answer. */
  readonly dropShed: boolean;
  readonly deadlineAware: boolean;
  readonly onOutOfMemory: (event: OutOfMemoryEvent) => void;
  /** With -metrics: the series, and when each request in service was admitted (for the latency histogram). */
  readonly metrics: ServerMetrics | undefined;
  readonly admittedAtMs: WeakMap<ServerResponse, number>;
  /** `answer`, or with -metrics `answer` that also records the latency of each request served. */
  readonly complete: (response: ServerResponse, completion: Completion) => void;
  readonly activeFaults: () => readonly ActiveFault[] | undefined;
  /** A middle tier's: where each request's own deadline (epoch ms) is kept, to carry down; undefined for other servers. */
  readonly broughtDeadline: WeakMap<ServerResponse, number> | undefined;
}

/** Answers a request that left service: one function for every request, its response the context. */
function answer(response: ServerResponse, completion: Completion): void {
  if (response.writableEnded || response.destroyed) return;
  if (completion === "served") response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("OK");
  else if (completion === "injected-error") response.writeHead(500, { "content-type": "text/plain" }).end("injected error\n");
  else if (completion === "upstream-failed") response.writeHead(502, { "content-type": "text/plain" }).end("upstream failed\n");
  else response.writeHead(504, { "content-type": "text/plain" }).end("deadline exceeded\n");
}

/**
 * The deadline a request brings, on the queue's clock, or undefined. The header states it
 * in epoch ms on the client's clock (see protection-headers.ts); the queue runs on a
 * monotonic clock, so it is moved there through the difference between the two now.
 */
function deadlineOf(request: IncomingMessage, context: RequestContext): number | undefined {
  const epochMs = parseDeadline(request.headers[DEADLINE_HEADER]);
  return epochMs === undefined ? undefined : context.clock.now() + (epochMs - context.now());
}

function handleRequest(request: IncomingMessage, response: ServerResponse, context: RequestContext): void {
  const { queue, now, metrics } = context;
  rememberResponse(request, response);
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path === "/api" || path === "/stats" || (path === "/metrics" && metrics !== undefined)) {
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/stats") {
      const answerStats = (snapshot: ServiceSnapshot) =>
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(serverLine(now(), snapshot, context.activeFaults())));
      if (context.stats === undefined) answerStats(queue.snapshot());
      else void context.stats().then(answerStats);
      return;
    }
    if (path === "/metrics") {
      if (context.metricsText === undefined) respondWithMetrics(metrics!.registry, response);
      else void context.metricsText().then((text) => response.writeHead(200, { "content-type": metricsContentType() }).end(text));
      return;
    }
    if (context.broughtDeadline !== undefined) {
      const brought = parseDeadline(request.headers[DEADLINE_HEADER]);
      if (brought !== undefined) context.broughtDeadline.set(response, brought);
    }
    const deadlineAt = context.deadlineAware ? deadlineOf(request, context) : undefined;
    if (deadlineAt !== undefined && queue.expireOnArrival(deadlineAt)) {
      answer(response, "expired");
      return;
    }
    if (metrics !== undefined) context.admittedAtMs.set(response, context.clock.now());
    const ticket = queue.admit(context.complete, response, deadlineAt);
    if (ticket === undefined) {
      const outOfMemory = queue.outOfMemory;
      if (outOfMemory !== undefined) {
        request.socket.destroy();
        context.onOutOfMemory(outOfMemory);
        return;
      }
      // -shed-with drop: no answer at all, as a full accept queue drops a SYN; the client waits out its timeout.
      if (context.dropShed) request.socket.setTimeout(DROPPED_HOLD_MS, () => request.socket.destroy());
      else response.writeHead(503, context.shedHeaders).end("overloaded\n");
      return;
    }
    response.on("close", () => {
      if (!response.writableEnded) queue.abandon(ticket);
    });
    return;
  }
  response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
}

/**
 * How long a dropped request's connection is kept, unanswered, for a client that never gives up:
 * a real SYN drop costs the server nothing and fails the client's connect after about this long
 * (Linux's 6 SYN retries); a connection held past it would only pile up descriptors.
 */
const DROPPED_HOLD_MS = 127_000;

/** How often Node looks for connections past the headers timeout: a tenth of it, 50 ms to 1 s. */
function connectionsCheckingIntervalMs(headersTimeoutMs: number): number {
  return headersTimeoutMs === 0 ? 30_000 : Math.min(1_000, Math.max(50, Math.round(headersTimeoutMs / 10)));
}

/** The answer to a request Node could not parse, by error code (Node's own choices); 400 otherwise. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: "431 Request Header Fields Too Large",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "413 Payload Too Large",
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout",
};

/**
 * After answering a bad request the server stops reading; unread bytes left in the kernel
 * would make it answer the client's next segment with a reset that can destroy the answer
 * before the client reads it. So the connection is half-closed and given this long to close
 * its side, then destroyed: a client that never does cannot hold a descriptor.
 */
const LINGER_MS = 2_000;

/** The last response begun on each connection, to tell whether an answer is being written. */
const latestResponse = new WeakMap<Socket, ServerResponse>();

/** Notes the answer a connection is giving, so that a parse error on it does not cut into it (see answerClientError). */
export function rememberResponse(request: IncomingMessage, response: ServerResponse): void {
  latestResponse.set(request.socket, response);
}

/**
 * A request that could not be parsed (garbage, oversized head, bad chunking, a head not
 * finished in time) is answered with a status line and the connection closed, unless the
 * peer is already gone or an answer on this connection has begun (a status line in the
 * middle of it would corrupt it).
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const latest = latestResponse.get(socket);
  const answerStarted = latest !== undefined && latest.headersSent && !latest.writableFinished;
  if (PEER_GONE_CODES.has(error.code ?? "") || !socket.writable || answerStarted) {
    socket.destroy();
    return;
  }
  closeWithStatus(socket, CLIENT_ERROR_STATUS[error.code ?? ""] ?? "400 Bad Request");
}

/** Answers with a bare status line and closes the connection, lingering a little (see LINGER_MS). */
export function closeWithStatus(socket: Socket, status: string, headers = ""): void {
  socket.end(`HTTP/1.1 ${status}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once("close", () => clearTimeout(linger));
}

export function listen(server: Server, address: ListenAddress, backlog: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(new FatalError(`listen ${formatListenAddress(address)}: ${describeSystemError(error)}`));
    };
    server.once("error", onError);
    const listenOptions =
      address.host === undefined ? { port: address.port, backlog } : { port: address.port, host: address.host, backlog };
    server.listen(listenOptions, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

const SYSTEM_ERROR_TEXT: Record<string, string> = {
  EADDRINUSE: "address already in use",
  EACCES: "permission denied",
  EADDRNOTAVAIL: "cannot assign requested address",
  EMFILE: "too many open files",
  ENFILE: "file table overflow",
  ENOTFOUND: "no such host",
};

export function describeSystemError(error: NodeJS.ErrnoException): string {
  const code = error.code ?? "";
  return SYSTEM_ERROR_TEXT[code] ?? error.message;
}

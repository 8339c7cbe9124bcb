import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { formatListenAddress, type ListenAddress } from "../cli/listen-address.ts";
import type { Clock } from "../clock/clock.ts";
import { seededRandom } from "../backoff/random.ts";
import { DEADLINE_HEADER, parseDeadline, retryAfterSeconds } from "../model/protection-headers.ts";
import { type Completion, type OutOfMemoryEvent, ServiceQueue } from "../model/service-queue.ts";
import { respondWithMetrics } from "../runtime/metrics-endpoint.ts";
import { randomSeed } from "../runtime/random-seed.ts";
import { type ServerMetrics, serverMetrics } from "./metrics.ts";
import type { ServerOptions } from "./options.ts";
import { serverReport } from "./reporter.ts";

export interface RunningServer {
  readonly address: ListenAddress;
  readonly queue: ServiceQueue;
  /** Client connections open now. */
  readonly openConnections: () => number;
  /** Stops accepting, drops every connection and the model's timer. */
  close(): Promise<void>;
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
}

/** Connection-level errors that only mean a peer went away; never worth a report. */
const PEER_GONE_CODES = new Set(["ECONNRESET", "EPIPE", "ECANCELED", "ERR_STREAM_DESTROYED"]);

/**
 * The HTTP shell around the service model: routes, the listen backlog, and wiring each
 * GET /api to a ServiceQueue ticket. Nothing here decides latency.
 */
export async function startHttpServer(options: ServerOptions, clock: Clock, hooks: ServerHooks = {}): Promise<RunningServer> {
  const queue = new ServiceQueue(clock, {
    latency: options.latency,
    cancelOnDisconnect: options.cancelOnDisconnect,
    maxConcurrency: options.maxConcurrency,
    errorInjection: options.errorRate > 0 ? { rate: options.errorRate, random: seededRandom(options.seed ?? randomSeed()) } : undefined,
    maxInService: options.maxInService ?? Infinity,
  });
  const now = hooks.now ?? Date.now;
  let outOfMemoryTold = false;
  const outOfMemory = (event: OutOfMemoryEvent) => {
    if (outOfMemoryTold) return;
    outOfMemoryTold = true;
    hooks.onOutOfMemory?.(event);
  };
  const shedHeaders: Record<string, string> = { "content-type": "text/plain" };
  if (options.retryAfterMs > 0) shedHeaders["retry-after"] = String(retryAfterSeconds(options.retryAfterMs));
  let openConnections = 0;
  const metrics = options.metrics ? serverMetrics(queue, options.latency.limit, () => openConnections) : undefined;
  const admittedAtMs = new WeakMap<ServerResponse, number>();
  const complete =
    metrics === undefined
      ? answer
      : (response: ServerResponse, completion: Completion) => {
          const admittedAt = admittedAtMs.get(response);
          if (completion === "served" && admittedAt !== undefined) metrics.observeServed((clock.now() - admittedAt) / 1000);
          answer(response, completion);
        };
  const context: RequestContext = {
    queue,
    now,
    clock,
    shedHeaders,
    deadlineAware: options.deadlineAware,
    onOutOfMemory: outOfMemory,
    metrics,
    admittedAtMs,
    complete,
  };
  // Requests in service may wait for hours or forever; only the time to receive a request is bounded.
  const server = createServer({ requestTimeout: 0, keepAliveTimeout: 5_000 }, (request, response) =>
    handleRequest(request, response, context),
  );
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!PEER_GONE_CODES.has(error.code ?? "") && socket.writable) {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    } else {
      socket.destroy();
    }
  });
  server.on("connection", (socket: Socket) => {
    openConnections++;
    socket.once("close", () => openConnections--);
  });
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
    openConnections: () => openConnections,
    close: () =>
      new Promise<void>((resolve) => {
        queue.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What every request's handling shares. */
interface RequestContext {
  readonly queue: ServiceQueue;
  /** Epoch ms, for the reports and for deadlines. */
  readonly now: () => number;
  /** The queue's clock. */
  readonly clock: Clock;
  readonly shedHeaders: Readonly<Record<string, string>>;
  readonly deadlineAware: boolean;
  readonly onOutOfMemory: (event: OutOfMemoryEvent) => void;
  /** With -metrics: the series, and when each request in service was admitted (for the latency histogram). */
  readonly metrics: ServerMetrics | undefined;
  readonly admittedAtMs: WeakMap<ServerResponse, number>;
  /** `answer`, or with -metrics `answer` that also records the latency of each request served. */
  readonly complete: (response: ServerResponse, completion: Completion) => void;
}

/** Answers a request that left service: one function for every request, its response the context. */
function answer(response: ServerResponse, completion: Completion): void {
  if (response.writableEnded || response.destroyed) return;
  if (completion === "served") response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("OK");
  else if (completion === "injected-error") response.writeHead(500, { "content-type": "text/plain" }).end("injected error\n");
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
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path === "/api" || path === "/stats" || (path === "/metrics" && metrics !== undefined)) {
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/stats") {
      const body = JSON.stringify(serverReport(now(), queue.snapshot()));
      response.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    if (path === "/metrics") {
      respondWithMetrics(metrics!.registry, response);
      return;
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
      response.writeHead(503, context.shedHeaders).end("overloaded\n");
      return;
    }
    response.on("close", () => {
      if (!response.writableEnded) queue.abandon(ticket);
    });
    return;
  }
  response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
}

function listen(server: Server, address: ListenAddress, backlog: number): Promise<void> {
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

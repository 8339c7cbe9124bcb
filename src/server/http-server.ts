import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { FatalError } from "../cli/usage-error.ts";
import { formatListenAddress, type ListenAddress } from "../cli/listen-address.ts";
import type { Clock } from "../clock/clock.ts";
import { ServiceQueue } from "../model/service-queue.ts";
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
  });
  const now = hooks.now ?? Date.now;
  // Requests in service may wait for hours or forever; only the time to receive a request
  // head is bounded (Node turns its own headers timeout off along with the request timeout).
  const server = createServer(
    {
      requestTimeout: 0,
      headersTimeout: options.headersTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingIntervalMs(options.headersTimeoutMs),
      keepAliveTimeout: 5_000,
    },
    (request, response) => handleRequest(request, response, queue, now),
  );
  server.on("clientError", answerClientError);
  // Without a listener Node drops a CONNECT request's connection without a word.
  server.on("connect", (_request: IncomingMessage, socket: Socket) => closeWithStatus(socket, "405 Method Not Allowed", "Allow: GET\r\n"));
  let openConnections = 0;
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

function handleRequest(request: IncomingMessage, response: ServerResponse, queue: ServiceQueue, now: () => number): void {
  latestResponse.set(request.socket, response);
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path === "/api" || path === "/stats") {
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/stats") {
      const body = JSON.stringify(serverReport(now(), queue.snapshot()));
      response.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    const ticket = queue.admit(() => {
      response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("OK");
    });
    if (ticket === undefined) {
      response.writeHead(503, { "content-type": "text/plain", "retry-after": "1" }).end("overloaded\n");
      return;
    }
    response.on("close", () => {
      if (!response.writableEnded) queue.abandon(ticket);
    });
    return;
  }
  response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
}

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

/**
 * A request that could not be parsed (garbage, oversized head, bad chunking, a head not
 * finished in time) is answered with a status line and the connection closed, unless the
 * peer is already gone or an answer on this connection has begun (a status line in the
 * middle of it would corrupt it).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const latest = latestResponse.get(socket);
  const answerStarted = latest !== undefined && latest.headersSent && !latest.writableFinished;
  if (PEER_GONE_CODES.has(error.code ?? "") || !socket.writable || answerStarted) {
    socket.destroy();
    return;
  }
  closeWithStatus(socket, CLIENT_ERROR_STATUS[error.code ?? ""] ?? "400 Bad Request");
}

/** Answers with a bare status line and closes the connection, lingering a little (see LINGER_MS). */
function closeWithStatus(socket: Socket, status: string, headers = ""): void {
  socket.end(`HTTP/1.1 ${status}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once("close", () => clearTimeout(linger));
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

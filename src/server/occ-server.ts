import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Random } from "../backoff/random.ts";
import type { ListenAddress } from "../cli/listen-address.ts";
import type { Clock } from "../clock/clock.ts";
import { drawNetworkDelay, type NetworkDelay } from "../model/occ/network-delay.ts";
import { VersionedRow } from "../model/occ/versioned-row.ts";
import { answerClientError, closeWithStatus, describeSystemError, listen, rememberResponse } from "./http-server.ts";

/*
 * ./server -workload occ: one versioned row over HTTP, the AWS backoff blog's OCC server.
 * GET /row answers the version with an ETag; PUT /row with If-Match lands (200, the new
 * ETag) when the tag is the current one and is refused with 412 otherwise; a PUT without
 * If-Match is refused with 428 (RFC 6585), so that no client overwrites blindly. GET /stats
 * gives the row's counts. The blog's network delay can be added on the server's side: the
 * request waits one draw before the row sees it and the answer another before it leaves.
 */

export const OCC_PATH = "/row";
/** A PUT's body is not used; one larger than this is refused rather than read. */
const MAX_BODY_BYTES = 64 * 1024;

export interface OccServerOptions {
  readonly listen: ListenAddress;
  readonly network: NetworkDelay;
  readonly headersTimeoutMs: number;
}

export interface RunningOccServer {
  readonly address: ListenAddress;
  readonly row: VersionedRow;
  close(): Promise<void>;
}

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: `${JSON.stringify(value)}\n`,
});
const etagOf = (version: number) => `"${version}"`;

/**
 * The version an If-Match header agrees with: the current one when it lists `*` or the
 * current strong tag, NaN otherwise (a stale, weak or malformed tag never matches: RFC 9110
 * compares If-Match strongly).
 */
export function matchedVersion(ifMatch: string, current: number): number {
  const tags = ifMatch.split(",").map((tag) => tag.trim());
  return tags.includes("*") || tags.includes(etagOf(current)) ? current : Number.NaN;
}

/** What the row answers a request that has crossed the network. */
export function answerRow(row: VersionedRow, method: string, ifMatch: string | undefined): Answer {
  if (method === "GET" || method === "HEAD") {
    const version = row.read();
    return json(200, { version }, { etag: etagOf(version) });
  }
  if (method !== "PUT") return json(405, { error: "method not allowed" }, { allow: "GET, HEAD, PUT" });
  if (ifMatch === undefined) return json(428, { error: "PUT needs If-Match with the ETag of a GET" });
  if (!row.write(matchedVersion(ifMatch, row.version))) return json(412, { error: "stale version", version: row.version });
  return json(200, { version: row.version }, { etag: etagOf(row.version) });
}

export async function startOccServer(
  options: OccServerOptions,
  clock: Clock,
  random: Random,
  onProblem: (message: string) => void,
): Promise<RunningOccServer> {
  const row = new VersionedRow();
  const delay = () => drawNetworkDelay(options.network, random);
  const send = (response: ServerResponse, answer: Answer) => {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(answer.status, answer.headers).end(answer.body);
  };
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    rememberResponse(request, response);
    const path = (request.url ?? "/").split("?", 1)[0];
    if (path === "/stats") {
      const stats = { version: row.version, reads: row.reads, writes: row.writes, conflicts: row.conflicts };
      send(response, request.method === "GET" ? json(200, stats) : json(405, { error: "method not allowed" }, { allow: "GET" }));
      request.resume();
      return;
    }
    if (path !== OCC_PATH) {
      send(response, json(404, { error: `not found: the row is ${OCC_PATH}` }));
      request.resume();
      return;
    }
    let bytes = 0;
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES && !response.headersSent) {
        response.writeHead(413, { connection: "close", "content-type": "application/json" }).end('{"error":"body too large"}\n');
        request.socket.destroySoon();
      }
    });
    request.on("error", () => {}); // a peer that went away: nothing to answer
    request.on("end", () => {
      if (response.headersSent) return;
      const ifMatch = request.headers["if-match"];
      clock.schedule(delay(), () => {
        const answer = answerRow(row, request.method ?? "", ifMatch);
        clock.schedule(delay(), () => send(response, answer));
      });
    });
  };
  const server = createServer({ requestTimeout: 0, headersTimeout: options.headersTimeoutMs, keepAliveTimeout: 5_000 }, handle);
  server.on("clientError", answerClientError);
  server.on("connect", (_request: IncomingMessage, socket: Socket) =>
    closeWithStatus(socket, "405 Method Not Allowed", "Allow: GET, PUT\r\n"),
  );
  await listen(server, options.listen, 511);
  server.on("error", (error: NodeJS.ErrnoException) => onProblem(`accept: ${describeSystemError(error)}`));
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : options.listen.port;
  return {
    address: { host: options.listen.host, port },
    row,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

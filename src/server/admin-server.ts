import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { ListenAddress } from "../cli/listen-address.ts";
import { listen } from "./http-server.ts";
import {
  type ActiveFault,
  FaultControlError,
  formatActiveFaults,
  MAX_CONTROL_BODY_BYTES,
  parseFaultControl,
} from "../model/faults/control.ts";

/**
 * The fault control's own listener (-admin-listen), on loopback only: `GET /faults` says
 * which faults are on, `PUT /faults` with a body such as `capacity*0.5, errors*0.2` sets
 * them (an empty body lifts them). A bad body is answered 400 with one line; nothing a
 * request sends can stop the server.
 */
export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/** One runner talks to the control, a request at a time. */
const ADMIN_BACKLOG = 16;

const LOOPBACK_PEERS = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

export async function startAdminServer(
  address: ListenAddress,
  control: { readonly activeFaults: () => readonly ActiveFault[] | undefined; setFaults(active: readonly ActiveFault[]): void },
): Promise<AdminServer> {
  const state = () => {
    const faults = control.activeFaults() ?? [];
    return `${JSON.stringify({ faults, text: formatActiveFaults(faults) })}\n`;
  };
  const reply = (response: ServerResponse, status: number, body: string, type = "text/plain"): void => {
    response.writeHead(status, { "content-type": type, connection: "close" }).end(body);
  };
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    // Bound to loopback already; a peer from elsewhere would mean a misconfigured host, and is refused all the same.
    if (!LOOPBACK_PEERS.has(request.socket.remoteAddress ?? "")) return reply(response, 403, "the fault control answers loopback only\n");
    const path = (request.url ?? "/").split("?", 1)[0];
    if (path !== "/faults") return reply(response, 404, "not found: the fault control is GET or PUT /faults\n");
    if (request.method === "GET") return reply(response, 200, state(), "application/json");
    if (request.method !== "PUT") {
      response.setHeader("allow", "GET, PUT");
      return reply(response, 405, "method not allowed: GET or PUT /faults\n");
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CONTROL_BODY_BYTES) {
        reply(response, 413, `body too large: at most ${MAX_CONTROL_BODY_BYTES} bytes\n`);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", (): void => {
      if (response.writableEnded) return;
      let active: ActiveFault[];
      try {
        active = parseFaultControl(Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        if (!(error instanceof FaultControlError)) throw error;
        return reply(response, 400, `${error.message}\n`);
      }
      control.setFaults(active);
      reply(response, 200, state(), "application/json");
    });
    request.on("error", () => request.destroy());
  };
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 10_000 }, handle);
  server.on("clientError", (_error, socket) => socket.destroy());
  await listen(server, address, ADMIN_BACKLOG);
  const bound = server.address();
  return {
    port: typeof bound === "object" && bound !== null ? bound.port : address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterThisTest } from "./after-this-test.ts";

export interface ScriptedServer {
  readonly url: string;
  readonly port: number;
  /** performance.now() of every request's arrival. */
  readonly arrivals: number[];
  /** Connections the server saw closed by the client. */
  readonly closedByClient: () => number;
  /** Connections open now: at 0, every request a client wrote has arrived. */
  readonly openConnections: () => number;
}

/**
 * A small HTTP server on an ephemeral loopback port that answers as `respond` says (or
 * never, when respond does nothing), recording arrivals. Closed after each test.
 */
export async function startScriptedServer(respond: (request: IncomingMessage, response: ServerResponse) => void): Promise<ScriptedServer> {
  const arrivals: number[] = [];
  let closedByClient = 0;
  const server = createServer((request, response) => {
    arrivals.push(performance.now());
    response.on("close", () => {
      if (!response.writableEnded) closedByClient++;
    });
    respond(request, response);
  });
  let openConnections = 0;
  server.on("connection", (socket) => {
    openConnections++;
    socket.once("close", () => openConnections--);
  });
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  afterThisTest(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    url: `http://127.0.0.1:${port}/api`,
    port,
    arrivals,
    closedByClient: () => closedByClient,
    openConnections: () => openConnections,
  };
}

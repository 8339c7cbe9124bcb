import { createServer, type ServerResponse } from "node:http";
import { FatalError } from "../cli/usage-error.ts";
import { loadAssets } from "./assets.ts";
import type { DashboardEvent } from "./events.ts";

export interface Dashboard {
  /** Where the page is, e.g. http://127.0.0.1:41234/ */
  readonly url: string;
  /** Records an event and sends it to every page connected now. */
  publish(event: DashboardEvent): void;
  /** Resolves once a page has connected (at once if one has already). */
  firstViewer(): Promise<void>;
  /** Drops every page's event stream; pages reconnect by themselves (a network blip). */
  dropStreams(): void;
  /** Ends every stream and stops serving. */
  close(): Promise<void>;
}

/** How long a page waits before reconnecting a dropped stream (the SSE `retry` field). */
const RECONNECT_MS = 1_000;

const frame = (event: DashboardEvent) => `data: ${JSON.stringify(event)}\n\n`;

/**
 * The live dashboard's server, on loopback only: the page, uPlot, and GET /events, a
 * stream of Server-Sent Events (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 * Every connection first gets a `hello` and the whole history, so a page that reconnects
 * (EventSource does so by itself) starts over with everything so far.
 */
export async function startDashboard(options: { port: number; title: string; source: string }): Promise<Dashboard> {
  const assets = loadAssets();
  const history: string[] = [frame({ kind: "hello", title: options.title, source: options.source })];
  const streams = new Set<ServerResponse>();
  let viewerArrived: () => void = () => {};
  const firstViewer = new Promise<void>((resolve) => (viewerArrived = resolve));
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0]!;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/events") {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
      response.write(`retry: ${RECONNECT_MS}\n\n${history.join("")}`);
      streams.add(response);
      response.on("close", () => streams.delete(response));
      viewerArrived();
      return;
    }
    const asset = assets.get(path);
    if (asset === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    response
      .writeHead(200, { "content-type": asset.type, "content-length": asset.body.length, "cache-control": "no-cache" })
      .end(asset.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new FatalError(
          `dashboard: listen 127.0.0.1:${options.port}: ${error.code === "EADDRINUSE" ? "address already in use" : error.message}`,
        ),
      ),
    );
    server.listen({ port: options.port, host: "127.0.0.1" }, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}/`,
    publish(event) {
      const text = frame(event);
      history.push(text);
      for (const stream of streams) stream.write(text);
    },
    firstViewer: () => firstViewer,
    dropStreams() {
      for (const stream of streams) stream.destroy();
      streams.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.end();
        streams.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        // A page that has not read its last events yet gets a moment, then is cut off.
        setTimeout(() => server.closeAllConnections(), 1_000).unref();
      }),
  };
}

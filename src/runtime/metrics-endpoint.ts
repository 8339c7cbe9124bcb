import { createServer, type ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { FatalError } from "../cli/usage-error.ts";
import { formatListenAddress, type ListenAddress } from "../cli/listen-address.ts";

/**
 * Metric names share one prefix; units are base units (seconds) and counters end in
 * `_total`, as "Metric and label naming" in the Prometheus documentation asks
 * (https://prometheus.io/docs/practices/naming/).
 */
export const METRIC_PREFIX = "thundering_herd_";

/**
 * Latency buckets in seconds, for both programs: fine around the default 100 ms base delay
 * and up to the 2 s timeout, then coarse up to an hour (a collapsed server's delay).
 */
export const LATENCY_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.105, 0.11, 0.125, 0.15, 0.2, 0.3, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600];

/** Answers a scrape with the registry in the Prometheus text format. */
export function respondWithMetrics(registry: Registry, response: ServerResponse): void {
  registry.metrics().then(
    (text) => response.writeHead(200, { "content-type": registry.contentType }).end(text),
    (error: unknown) =>
      response
        .writeHead(500, { "content-type": "text/plain" })
        .end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`),
  );
}

export interface MetricsEndpoint {
  /** The address actually bound (port 0 becomes a free port). */
  readonly address: ListenAddress;
  close(): Promise<void>;
}

/** An HTTP server of its own that answers GET /metrics (for programs that are not HTTP servers). */
export function serveMetrics(address: ListenAddress, registry: Registry): Promise<MetricsEndpoint> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0];
    if (path !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found; try /metrics\n");
    } else if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("method not allowed\n");
    } else {
      respondWithMetrics(registry, response);
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const reason = error.code === "EADDRINUSE" ? "address already in use" : error.message;
      reject(new FatalError(`metrics: listen ${formatListenAddress(address)}: ${reason}`));
    });
    server.listen({ port: address.port, ...(address.host === undefined ? {} : { host: address.host }) }, () => {
      const bound = server.address();
      const port = typeof bound === "object" && bound !== null ? bound.port : address.port;
      resolve({
        address: { host: address.host, port },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

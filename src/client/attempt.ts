import { Agent } from "undici";
import type { Transport } from "../model/herd.ts";
import { classifyError } from "./classify-error.ts";
import { type AttemptResult, classifyStatus } from "../model/outcome.ts";

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
 * leaves hanging.
 */
export function createHttpTransport(url: string, timeoutMs: number): HttpTransport {
  const target = new URL(url);
  const agent = new Agent({
    connections: null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    connect: { timeout: Math.max(timeoutMs, 1) },
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
      agent.request({ origin: target.origin, path, method: "GET", signal: controller.signal }).then(
        async (response) => {
          try {
            await response.body.dump();
          } catch {
            // The answer's status is known; a body cut short does not change it.
          }
          done(classifyStatus(response.statusCode));
        },
        (error: unknown) => done(classifyError(error)),
      );
      return controller;
    },
    abort(controller) {
      controller.abort();
    },
    close: () => agent.destroy(),
  };
}

import http from "node:http";
import https from "node:https";
import { readBodyToEnd } from "./http-body.ts";

/**
 * What became of one request past saturation, as the client saw it:
 * - served: a 2xx answer, whole, within the timeout;
 * - shed: 503 or 429, the service turned it away with an answer;
 * - error: any other status, or a body cut short;
 * - timeout: connected (the kernel or the service took it) but not answered within the timeout;
 * - connect-timeout: never connected within the timeout (a full accept queue drops the SYN);
 * - refused: the connection refused (nothing listening, or a full queue that refuses);
 * - reset: the connection reset or closed before an answer;
 * - probe-limit: the sender's own machine had no port or descriptor to send it (not the service's doing).
 */
export type Fate = "served" | "shed" | "error" | "timeout" | "connect-timeout" | "refused" | "reset" | "probe-limit";

export const FATES: readonly Fate[] = ["served", "shed", "error", "timeout", "connect-timeout", "refused", "reset", "probe-limit"];

/** One request's times (ms on the probe's clock) and fate. */
export interface Exchange {
  readonly sentAt: number;
  /** When its TCP (and TLS) connection was up; undefined when it never was. */
  readonly connectedAt: number | undefined;
  /** When the answer ended, or the probe gave up. */
  readonly endedAt: number;
  readonly fate: Fate;
  /** The status of an answer, when one came. */
  readonly status?: number;
}

export interface ExchangePlan {
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
}

/**
 * One GET on a connection of its own, closed after the answer, as a new user's request meets the
 * service: through its listen backlog and its accept. node:http (not undici's pool) tells when the
 * connection came up, which parts a connect timeout from a request that a service held. Resolves,
 * never rejects; `stop` ends it at once as a "timeout" (or connect timeout) at that instant, and
 * `abandonAfterMs` gives up on it early the same way (a client that left).
 */
export function exchangeOnce(
  url: URL,
  plan: ExchangePlan,
  now: () => number,
  stop: AbortSignal,
  abandonAfterMs?: number,
): Promise<Exchange> {
  const sentAt = now();
  let connectedAt: number | undefined;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (fate: Fate, status?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop.removeEventListener("abort", giveUp);
      request.destroy();
      resolve({ sentAt, connectedAt, endedAt: now(), fate, ...(status === undefined ? {} : { status }) });
    };
    const giveUp = () => finish(connectedAt === undefined ? "connect-timeout" : "timeout");
    const timer = setTimeout(giveUp, Math.min(plan.timeoutMs, abandonAfterMs ?? Infinity));
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request(url, { method: "GET", agent: false, headers: { connection: "close" } });
    // The TCP connection, TLS or not: a connection in the kernel's accept queue is held, though its TLS handshake waits for the accept.
    request.on("socket", (socket) => socket.once("connect", () => (connectedAt ??= now())));
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      readBodyToEnd(response, plan.maxBodyBytes, response.headers["content-length"]).then(
        () => finish(fateOfStatus(status), status),
        () => finish(fateOfStatus(status) === "served" ? "error" : fateOfStatus(status), status),
      );
    });
    request.on("error", (error) => {
      const fate = fateOfError(error);
      // The kernel's own timeout (ETIMEDOUT) before the connection came up is a connect timeout.
      finish(fate === "timeout" && connectedAt === undefined ? "connect-timeout" : fate);
    });
    if (stop.aborted) giveUp();
    else stop.addEventListener("abort", giveUp, { once: true });
    request.end();
  });
}

function fateOfStatus(status: number): Fate {
  if (status >= 200 && status < 300) return "served";
  return status === 503 || status === 429 ? "shed" : "error";
}

/** A transport error's fate, by its code or its cause's (Node's codes: the connection's, the local machine's). */
function fateOfError(error: unknown): Fate {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code in FATE_BY_CODE) return FATE_BY_CODE[code]!;
    current = (current as { cause?: unknown }).cause;
  }
  return "error";
}

const FATE_BY_CODE: Readonly<Record<string, Fate>> = {
  ECONNREFUSED: "refused",
  ECONNRESET: "reset",
  EPIPE: "reset",
  ETIMEDOUT: "timeout",
  // No port or descriptor on the probe's own machine: the service never saw it.
  EADDRNOTAVAIL: "probe-limit",
  EADDRINUSE: "probe-limit",
  EMFILE: "probe-limit",
  ENFILE: "probe-limit",
};

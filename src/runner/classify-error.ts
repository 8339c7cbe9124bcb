import { type AttemptResult, type ErrorKind, TIMEDOUT_RESULT } from "../model/outcome.ts";

/*
 * Classification of the real transport's failures. It reads error codes only, never message
 * text: undici and Node give every error a stable `code`, and undici wraps net errors in `cause`.
 */
const ERROR_KIND_BY_CODE: Readonly<Record<string, ErrorKind>> = {
  ECONNREFUSED: "refused",
  ECONNRESET: "reset",
  EPIPE: "reset",
  UND_ERR_SOCKET: "closed",
  UND_ERR_CLOSED: "closed",
  EADDRNOTAVAIL: "no-local-port",
  EADDRINUSE: "no-local-port",
  EMFILE: "no-file-descriptor",
  ENFILE: "no-file-descriptor",
  ENETUNREACH: "unreachable",
  EHOSTUNREACH: "unreachable",
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  // readBodyToEnd's cap (src/runtime/http-body.ts): an answer longer than the reader takes.
  BODY_TOO_LARGE: "body-too-large",
};

/** Timeouts raised by the HTTP stack itself rather than by our own deadline. */
const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

/** Classifies a thrown error by its code, or the code of its cause (undici wraps net errors). */
export function classifyError(error: unknown): AttemptResult {
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return TIMEDOUT_RESULT;
  return { outcome: "error", errorKind: (code !== undefined ? ERROR_KIND_BY_CODE[code] : undefined) ?? "other" };
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code in ERROR_KIND_BY_CODE) return code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  const topCode = (error as { code?: unknown } | null)?.code;
  return typeof topCode === "string" ? topCode : undefined;
}

/**
 * Failures of the client's own machine before anything was sent: no file descriptor for a
 * socket (EMFILE, ENFILE), no local address or port to connect from (EADDRNOTAVAIL,
 * EADDRINUSE: the ephemeral ports are exhausted). The server never saw these attempts.
 */
export function isClientLimit(result: AttemptResult): boolean {
  return result.errorKind === "no-file-descriptor" || result.errorKind === "no-local-port";
}

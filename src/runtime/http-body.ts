import type { Readable } from "node:stream";
import type { FlagSpec } from "../cli/flags.ts";

/** An answer's body past the reader's cap: an error of its own kind (classifyError: "body-too-large"). */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  readonly code = "BODY_TOO_LARGE";
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`the answer's body is longer than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/** A body that closed without its end and without an error of its own (its reader was aborted). */
class BodyCutShortError extends Error {
  override readonly name = "BodyCutShortError";
  readonly code = "UND_ERR_ABORTED";
}

/**
 * Reads an HTTP answer's body to its end, counting bytes and keeping none, and resolves with the
 * count. It rejects when the body does not arrive whole: the transport's error (a broken chunked
 * encoding, a connection closed before the Content-Length), or a BodyTooLargeError once more than
 * `maxBytes` arrived or were announced by `contentLength`. A body over the cap is destroyed at
 * once, which makes undici destroy its connection, so a reader never takes in much more than the
 * cap. (undici's own `dump()` stops quietly after 128 KiB and hides the errors.)
 */
export function readBodyToEnd(body: Readable, maxBytes: number, contentLength?: string | string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let ended = false;
    body.once("error", reject);
    body.once("end", () => {
      ended = true;
      resolve(bytes);
    });
    // 'close' follows 'end' on every whole body: build the error (and its stack) only for a cut one.
    // After an 'error', this rejection is a no-op.
    body.once("close", () => {
      if (!ended) reject(new BodyCutShortError("the answer's body closed before its end"));
    });
    const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
    if (declared > maxBytes) {
      body.destroy(new BodyTooLargeError(maxBytes));
      return;
    }
    body.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) body.destroy(new BodyTooLargeError(maxBytes));
    });
  });
}

/** The cap on an answer's body: -max-body's default, and the OCC workload's, which has no flag for it. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * The cap on an answer's body, one spec for every program that reads real answers: ./client
 * -max-body, probe -max-body, ./server -upstream-max-body (a middle tier's calls).
 */
export const MAX_BODY_FLAG = {
  name: "max-body",
  group: "run",
  kind: "integer",
  default: DEFAULT_MAX_BODY_BYTES,
  min: 1,
  placeholder: "bytes",
  description: "an answer with a longer body is an error (body-too-large), read no further",
} as const satisfies FlagSpec;

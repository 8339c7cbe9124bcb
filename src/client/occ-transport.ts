import { Agent } from "undici";
import type { OccTransport, OccWriteOutcome } from "../model/occ/occ-transport.ts";
import { classifyStatus } from "../model/outcome.ts";
import { DEFAULT_MAX_BODY_BYTES, readBodyToEnd } from "../runtime/http-body.ts";
import { classifyError } from "../runner/classify-error.ts";

export interface OccHttpTransport extends OccTransport {
  /** Failures other than conflicts, by kind (`refused`, `http-5xx`, `timedout`, …). */
  readonly errorKinds: ReadonlyMap<string, number>;
  /** Mean time from sending a call to having its answer, ms: the round trip the clients saw. */
  meanCallMs(): number;
  close(): Promise<void>;
}

/**
 * The row over HTTP: a read is GET (the version is its ETag), a write is PUT with If-Match.
 * Each call is bounded by `timeoutMs`; connections are kept alive and shared.
 */
export function createOccHttpTransport(url: string, timeoutMs: number): OccHttpTransport {
  const target = new URL(url);
  const path = `${target.pathname}${target.search}`;
  const agent = new Agent({ connections: null, pipelining: 1, keepAliveTimeout: 4_000, connect: { timeout: timeoutMs } });
  const errorKinds = new Map<string, number>();
  const failed = (kind: string) => errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
  let callCount = 0;
  let callMsTotal = 0;
  const call = (method: "GET" | "PUT", headers: Record<string, string>, answered: (status: number, etag: string | undefined) => void) => {
    const sentAt = performance.now();
    const done = (status: number, etag: string | undefined) => {
      callCount++;
      callMsTotal += performance.now() - sentAt;
      answered(status, etag);
    };
    agent
      .request({ origin: target.origin, path, method, headers, signal: AbortSignal.timeout(timeoutMs), headersTimeout: 0, bodyTimeout: 0 })
      .then(
        async (response) => {
          try {
            await readBodyToEnd(response.body, DEFAULT_MAX_BODY_BYTES, response.headers["content-length"]);
          } catch (error) {
            // An error status stands; a success is one only with its whole body (undici's dump() hid a broken one).
            if (classifyStatus(response.statusCode).outcome === "ok") {
              failed(classifyError(error).errorKind ?? "other");
              done(0, undefined);
              return;
            }
          }
          const etag = response.headers.etag;
          done(response.statusCode, Array.isArray(etag) ? etag[0] : etag);
        },
        (error: unknown) => {
          const name = (error as { name?: unknown } | null)?.name;
          failed(name === "TimeoutError" ? "timedout" : (classifyError(error).errorKind ?? "timedout"));
          done(0, undefined);
        },
      );
  };
  return {
    errorKinds,
    meanCallMs: () => (callCount === 0 ? 0 : callMsTotal / callCount),
    read(done) {
      call("GET", {}, (status, etag) => {
        const version = status === 200 ? versionOfEtag(etag) : undefined;
        if (status !== 0 && version === undefined) failed(status === 200 ? "no-etag" : `http-${status}`);
        done(version);
      });
    },
    write(version, done) {
      call("PUT", { "if-match": `"${version}"`, "content-length": "0" }, (status) => {
        let outcome: OccWriteOutcome = "error";
        if (status === 200 || status === 204) outcome = "written";
        else if (status === 412) outcome = "conflict";
        else if (status !== 0) failed(`http-${status}`);
        done(outcome);
      });
    },
    close: () => agent.destroy(),
  };
}

/** `"12"` is version 12; anything else is no version. */
function versionOfEtag(etag: string | undefined): number | undefined {
  const match = /^"(\d+)"$/.exec(etag ?? "");
  return match === null ? undefined : Number(match[1]);
}

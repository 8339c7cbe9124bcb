import { describe, expect, it } from "vitest";
import { classifyError, isClientLimit } from "../../../src/runner/classify-error.ts";
import { classifyStatus, isNonFatal } from "../../../src/model/outcome.ts";

const withCode = (code: string) => Object.assign(new Error("message text is never read"), { code });
const wrapped = (code: string) => Object.assign(new Error("fetch failed"), { code: "UND_ERR_WRAPPER", cause: withCode(code) });

describe("classifyStatus", () => {
  it.each([
    [200, "ok", undefined],
    [204, "ok", undefined],
    [301, "error", "http-other"],
    [404, "error", "http-4xx"],
    [500, "error", "http-5xx"],
    [503, "error", "http-5xx"],
  ])("%i -> %s (%s)", (status, outcome, errorKind) => {
    expect(classifyStatus(status)).toEqual(errorKind === undefined ? { outcome } : { outcome, errorKind });
  });

  it("429 -> error (http-4xx), marked as the server's load: non-fatal to a hedged request, unlike another 4xx", () => {
    expect(classifyStatus(429)).toEqual({ outcome: "error", errorKind: "http-4xx", tooManyRequests: true });
    expect(isNonFatal(classifyStatus(429))).toBe(true);
    expect(isNonFatal(classifyStatus(400))).toBe(false);
    expect(isNonFatal(classifyStatus(503))).toBe(true);
  });
});

describe("classifyError", () => {
  it.each([
    [withCode("ECONNREFUSED"), "error", "refused"],
    [withCode("ECONNRESET"), "error", "reset"],
    [withCode("EPIPE"), "error", "reset"],
    [withCode("UND_ERR_SOCKET"), "error", "closed"],
    [withCode("EADDRNOTAVAIL"), "error", "no-local-port"],
    [withCode("EMFILE"), "error", "no-file-descriptor"],
    [withCode("ENFILE"), "error", "no-file-descriptor"],
    [withCode("ENOTFOUND"), "error", "dns"],
    [withCode("EHOSTUNREACH"), "error", "unreachable"],
    [wrapped("ECONNREFUSED"), "error", "refused"],
    [wrapped("EADDRNOTAVAIL"), "error", "no-local-port"],
    [withCode("UND_ERR_CONNECT_TIMEOUT"), "timedout", undefined],
    [withCode("UND_ERR_HEADERS_TIMEOUT"), "timedout", undefined],
    [wrapped("ETIMEDOUT"), "timedout", undefined],
    [withCode("SOMETHING_NEW"), "error", "other"],
    [new Error("ECONNREFUSED in the message only"), "error", "other"],
    ["not even an error", "error", "other"],
    [null, "error", "other"],
  ])("%o -> %s (%s)", (error, outcome, errorKind) => {
    expect(classifyError(error)).toEqual(errorKind === undefined ? { outcome } : { outcome, errorKind });
  });
});

describe("isClientLimit", () => {
  it.each([
    ["EMFILE", true],
    ["ENFILE", true],
    ["EADDRNOTAVAIL", true],
    ["EADDRINUSE", true],
    ["ECONNREFUSED", false],
    ["ECONNRESET", false],
    ["UND_ERR_CONNECT_TIMEOUT", false],
  ])("%s -> %s: the attempt never left this machine", (code, limit) => {
    expect(isClientLimit(classifyError(wrapped(code)))).toBe(limit);
  });
});

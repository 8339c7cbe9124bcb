import { describe, expect, it } from "vitest";
import { redactCredentials, redactUrl } from "../../../src/cli/redact-url.ts";
import { startLine } from "../../../src/client/main.ts";
import { parseClientArgs, resolveClientOptions } from "../../../src/options/client.ts";
import { parseServerArgs, resolveServerProgramOptions } from "../../../src/options/server.ts";
import { describeUpstream } from "../../../src/server/upstream.ts";

describe("redactUrl", () => {
  it.each([
    ["http://user:pass@127.0.0.1:8080/api?x=1", "http://***@127.0.0.1:8080/api?x=1"],
    ["https://user@example.com/", "https://***@example.com/"],
    ["http://:pass@127.0.0.1/", "http://***@127.0.0.1/"],
    ["http://127.0.0.1:8080/api", "http://127.0.0.1:8080/api"],
    ["127.0.0.1:8080", "127.0.0.1:8080"],
    ["not a URL //user:pass@host/", "not a URL //***@host/"],
  ])("%s → %s", (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it("hides every URL's credentials in a list, a password's own @, comma or space included", () => {
    expect(redactCredentials("http://a:b@h1/api,http://c:p@s, s@h2:99999/api,http://h3/")).toBe(
      "http://***@h1/api,http://***@h2:99999/api,http://h3/",
    );
    expect(redactUrl("http://a,b:p w@h:99999/")).toBe("http://***@h:99999/");
  });

  it("hides the credentials in a middle tier's start-up line", () => {
    const parsed = parseServerArgs(["-model", "queue", "-upstream", "http://tier:s3cret@127.0.0.1:8071/api"]);
    if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
    const line = describeUpstream(resolveServerProgramOptions(parsed.values).upstream!);
    expect(line).toMatch(/^calls http:\/\/\*\*\*@127\.0\.0\.1:8071\/api with /);
  });

  it("hides the credentials in the client's start-up line", () => {
    const parsed = parseClientArgs(["-url", "http://user:s3cret@127.0.0.1:8070/api", "-clients", "1"]);
    if (parsed.kind !== "run") throw new Error("unreachable: no help asked for");
    const line = startLine(resolveClientOptions(parsed.values), "", 1);
    expect(line).toMatch(/^client: .*target http:\/\/\*\*\*@127\.0\.0\.1:8070\/api/);
    expect(line).not.toContain("s3cret");
  });
});

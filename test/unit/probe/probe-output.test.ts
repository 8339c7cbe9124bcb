import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probeInProcess } from "../../helpers/probe-in-process.ts";
import { startScriptedServer } from "../../helpers/scripted-server.ts";
import { temporaryDir } from "../../helpers/temporary-dirs.ts";

/*
 * What the probe writes: a result file it could not write is known before the first request,
 * and credentials in the URL reach neither its lines nor its scenario nor its report.
 */

const SHORT_STEPS = ["-no-overload", "-step-duration", "150ms", "-step-requests", "20", "-timeout", "1s"];

/** A service that saturates: two requests served at a time, 5 ms each, the rest wait in line. */
async function twoAtATime() {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const serveNext = () => {
    const next = waiting.shift();
    if (next === undefined) return void busy--;
    next();
  };
  return startScriptedServer((_request, response) => {
    const serve = () =>
      setTimeout(() => {
        response.end("OK");
        serveNext();
      }, 5);
    if (busy < 2) {
      busy++;
      serve();
    } else waiting.push(serve);
  });
}

describe("the probe's output", () => {
  it.each(["-out", "-report"])("a %s that cannot be written ends the probe with one line, exit 1, before any request", async (flag) => {
    const server = await startScriptedServer((_request, response) => response.end("OK"));
    const path = join(temporaryDir(), "no-such-dir", "x.out");
    const end = await probeInProcess([...SHORT_STEPS, flag, path, server.url]);
    expect(end.exitCode).toBe(1);
    expect(end.stderrLines).toEqual([`probe: cannot write ${path}: no such file or directory`]);
    expect(server.arrivals).toHaveLength(0);
  });

  it("names a port out of range as the port, and quotes no user name or password in its refusal", async () => {
    const end = await probeInProcess(["http://probe-user:s3cret@127.0.0.1:99999/api"]);
    expect(end.exitCode).toBe(2);
    expect(end.stderrLines[0]).toBe('probe: "http://***@127.0.0.1:99999/api": port 99999 is out of range (1 to 65535)');
  });

  it("never prints nor writes the URL's user name and password", async () => {
    const server = await twoAtATime();
    const dir = temporaryDir();
    const [out, report] = [join(dir, "service.yaml"), join(dir, "probe.html")];
    const url = server.url.replace("//", "//probe-user:s3cret@");
    // What is checked is what the probe writes, not where it saturates: a lenient rule and steps to 64, so that steps
    // a loaded machine disturbed (150 ms each) still saturate and the probe writes its files.
    const steps = ["-steps", "1,2,4,8,16,32,64", "-min-growth", "0.3"];
    const end = await probeInProcess([...SHORT_STEPS, ...steps, "-out", out, "-report", report, url]);
    const output = [...end.stdoutLines, ...end.stderrLines].join("\n");
    expect(end.exitCode, output).toBe(0);
    const written = { output, scenario: readFileSync(out, "utf8"), report: readFileSync(report, "utf8") };
    for (const [what, text] of Object.entries(written)) {
      expect(text, what).not.toMatch(/s3cret|probe-user/);
      expect(text, what).toContain(server.url.replace("//", "//***@"));
    }
  });
});

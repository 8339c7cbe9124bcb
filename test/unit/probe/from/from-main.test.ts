import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../../src/probe/main.ts";
import { capturedIo } from "../../../helpers/captured-io.ts";
import { temporaryDir } from "../../../helpers/temporary-dirs.ts";
import { loadTestFixture } from "./fixture.ts";

/** probe -from in process, on files written here. */
async function probeFrom(files: Record<string, string>) {
  const dir = temporaryDir("thundering-herd-from-main-");
  const paths = Object.entries(files).map(([name, text]) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  });
  const { io, stdout, stderr } = capturedIo();
  const code = await main(["-from", paths.join(",")], io).catch((error: Error) => error.message);
  return { code, stdout: stdout(), stderr: stderr() };
}

describe("probe -from, in process", () => {
  it("fits nothing from runs at fewer than three concurrencies, however many files", async () => {
    const wrk8 = loadTestFixture("wrk-8.txt");
    const run = await probeFrom({ "a.txt": wrk8, "b.txt": wrk8, "c.txt": wrk8 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("3 steps in the files, at 1 concurrencies; fitting needs 3 concurrencies");
    expect(run.stdout).not.toContain("picked");
  });

  it("refuses a file over 16 MiB by its bytes, not its characters", async () => {
    // 10 characters a row and 11 bytes: under the limit in characters, over it in bytes.
    const text = `users,rps,latency_ms,note\n${"1,16,31,é\n".repeat(1_600_000)}`;
    expect(text.length).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(Buffer.byteLength(text)).toBeGreaterThan(16 * 1024 * 1024);
    const run = await probeFrom({ "big.csv": text });
    expect(run.code).toMatch(/big\.csv: more than 16777216 bytes; a load test's summary is far smaller$/);
  });
});

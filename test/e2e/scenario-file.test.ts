import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSummary } from "../../src/report/summary-file.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";
import { temporaryDir } from "../helpers/temporary-dirs.ts";

async function sim(args: readonly string[]) {
  const cli = spawnCli("sim", args);
  const code = await cli.exited;
  return { code, stdout: cli.stdoutLines.join("\n"), stderr: cli.stderrLines.join("\n") };
}

/** The small crash scenario of test/helpers/small-scenario.ts, as a file, with seed 7. */
const SMALL = `scenario: 1
name: small crash
system:
  clients: 300
  lambda: 3
  timeout: 500ms
observation:
  interval: 2s
run:
  outage-at: 6s
  outage: 4s
  duration: 24s
  seed: 7
`;

describe("./sim FILE", () => {
  it("runs the file's scenario; a flag beside it wins; summary.json embeds the file", async () => {
    const dir = temporaryDir();
    const file = join(dir, "small.yaml");
    writeFileSync(file, SMALL);
    const fromFile = await sim([file, "-seed", "3", "-quiet", "-out", dir]);
    expect(fromFile.stderr).not.toMatch(/at .*\.(ts|mjs):\d+/);
    expect(fromFile.code).toBe(0);
    // The same run as the flags themselves, with the seed of the command line, not the file's.
    const fromFlags = await sim([
      "-clients",
      "300",
      "-lambda",
      "3",
      "-timeout",
      "500ms",
      "-interval",
      "2s",
      "-outage-at",
      "6s",
      "-outage",
      "4s",
      "-duration",
      "24s",
      "-seed",
      "3",
      "-quiet",
    ]);
    expect(fromFile.stdout).toBe(fromFlags.stdout);
    expect(fromFile.stdout).toMatch(/^summary: 24\.0s/m);
    const summary = parseSummary(readFileSync(join(dir, "summary.json"), "utf8"));
    expect(summary.settings).toMatchObject({ seed: 3, scenario: { file, text: SMALL } });
  });

  it("refuses a bad file in one line naming the file, the line and the key, exit 2", async () => {
    const dir = temporaryDir();
    const file = join(dir, "bad.yaml");
    writeFileSync(file, SMALL.replace("lambda: 3", "lambda: 0"));
    const run = await sim([file]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`${file}:5: lambda: invalid value "0": must be > 0`);
  });
});

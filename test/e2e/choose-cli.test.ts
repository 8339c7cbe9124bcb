import { describe, expect, it } from "vitest";
import { spawnCli } from "../helpers/spawn-cli.ts";

const choose = (args: readonly string[]) =>
  spawnCli("choose", ["--import", "./src/register-tsx.mjs", "src/bin/choose.ts", ...args], { command: process.execPath });
const herd = (args: readonly string[]) =>
  spawnCli("thundering-herd", ["--import", "./src/register-tsx.mjs", "src/bin/thundering-herd.ts", ...args], { command: process.execPath });

describe("thundering-herd choose", () => {
  // The real crash runs of -validate, which compare its verdicts with the real programs', are a validation
  // experiment (test/validate/choose-validate.test.ts, `npm run validate`).
  it("runs as a program of the package's command, and rejects a bad flag with one line and exit code 2", async () => {
    const [help, bad] = [herd(["choose", "-h"]), choose(["-seeds", "none"])];
    expect(await help.exited).toBe(0);
    expect(help.stdoutLines.join("\n")).toMatch(/-outages durations .*\(default: "5s,20s,60s"\)/);
    expect(help.stdoutLines.join("\n")).toMatch(/-error-rate p/);
    expect(await bad.exited).toBe(2);
    expect(bad.stderrLines.filter((line) => line !== "")).toEqual([
      'choose: invalid value "none" for flag -seeds: must be an integer',
      "Run 'choose -h' for usage.",
    ]);
  });
});

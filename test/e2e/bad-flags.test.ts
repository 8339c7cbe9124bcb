import { describe, expect, it } from "vitest";
import { BAD_FLAGS } from "../helpers/bad-flags.ts";
import { spawnCli } from "../helpers/spawn-cli.ts";

/*
 * The first few bad flags of each program through the real process (the root shims, and the
 * demo as `npm run demo` starts it): exit code 2, one line naming the flag, the hint, no
 * stack, nothing on stdout. Every case runs in process in test/unit/cli/bad-flags.test.ts.
 */
const PER_PROGRAM = 3;

const start = (name: keyof typeof BAD_FLAGS, args: readonly string[]) =>
  name === "demo"
    ? spawnCli("demo", ["--import", "./src/register-tsx.mjs", "src/bin/demo.ts", ...args], { command: process.execPath })
    : spawnCli(name, args);

describe("bad flags, through the programs", () => {
  for (const [name, cases] of Object.entries(BAD_FLAGS) as [keyof typeof BAD_FLAGS, (typeof BAD_FLAGS)["server"]][]) {
    it.each(cases.slice(0, PER_PROGRAM).map((entry) => [entry.args.join(" "), entry] as const))(
      `${name} %s`,
      async (_label, { args, names }) => {
        const run = start(name, args);
        expect(await run.exited).toBe(2);
        expect(run.stdoutLines.filter((line) => line !== "")).toEqual([]);
        const lines = run.stderrLines.filter((line) => line !== "");
        expect(lines).toHaveLength(2);
        expect(lines[0]).toMatch(new RegExp(`^${name}: .*${names.replace(/-/g, "\\-")}(?![\\w-])`));
        expect(lines[1]).toBe(`Run '${name} -h' for usage.`);
      },
    );
  }
});

import { describe, expect, it } from "vitest";
import { BAD_FLAGS } from "../helpers/bad-flags.ts";
import { runTogether } from "../helpers/run-together.ts";
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

type Program = keyof typeof BAD_FLAGS;
const programs = Object.entries(BAD_FLAGS) as [Program, (typeof BAD_FLAGS)["server"]][];
const label = (args: readonly string[]) => args.join(" ");

/** One bad flag through the real program: exit code 2, the two lines, nothing on stdout. */
async function rejects(name: Program, { args, names }: (typeof BAD_FLAGS)["server"][number]): Promise<void> {
  const run = start(name, args);
  expect(await run.exited).toBe(2);
  expect(run.stdoutLines.filter((line) => line !== "")).toEqual([]);
  const lines = run.stderrLines.filter((line) => line !== "");
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(new RegExp(`^${name}: .*${names.replace(/-/g, "\\-")}(?![\\w-])`));
  expect(lines[1]).toBe(`Run '${name} -h' for usage.`);
}

describe("bad flags, through the programs", () => {
  // Short processes, each a start-up on one core: all of them at once, each test judging its own.
  const runs = runTogether(
    Object.fromEntries(
      programs.flatMap(([name, cases]) =>
        cases.slice(0, PER_PROGRAM).map((entry) => [`${name} ${label(entry.args)}`, () => rejects(name, entry)] as const),
      ),
    ),
  );
  for (const [name, cases] of programs) {
    it.each(cases.slice(0, PER_PROGRAM).map((entry) => [label(entry.args)] as const))(`${name} %s`, (args) => runs(`${name} ${args}`));
  }
});

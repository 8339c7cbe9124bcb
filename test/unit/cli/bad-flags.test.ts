import { describe, expect, it } from "vitest";
import { describeFailure, UsageError } from "../../../src/cli/usage-error.ts";
import { main as clientMain } from "../../../src/client/main.ts";
import type { ProgramMain } from "../../../src/runtime/program-io.ts";
import { main as demoMain } from "../../../src/demo/main.ts";
import { main as serverMain } from "../../../src/server/main.ts";
import { main as simMain } from "../../../src/sim/main.ts";
import { BAD_FLAGS } from "../../helpers/bad-flags.ts";
import { capturedIo } from "../../helpers/captured-io.ts";

/*
 * Every bad flag of every program, in process: main(argv, io) must throw a UsageError before
 * doing anything, and the entry point's formatting of it must be one line naming the flag,
 * the hint, exit code 2, and no stack. (test/e2e/bad-flags.test.ts runs a few through the
 * real processes.)
 */

const noLaunch = () => {
  throw new Error("the demo started a program although its flags were bad");
};

const PROGRAMS: Record<keyof typeof BAD_FLAGS, ProgramMain> = {
  server: serverMain,
  client: clientMain,
  sim: simMain,
  demo: (argv, io) => demoMain(argv, io, noLaunch),
};

describe("bad flags, in process", () => {
  for (const [name, cases] of Object.entries(BAD_FLAGS) as [keyof typeof BAD_FLAGS, (typeof BAD_FLAGS)["server"]][]) {
    it(`${name}: at least 12 cases`, () => expect(cases.length).toBeGreaterThanOrEqual(12));

    it.each(cases.map((entry) => [entry.args.join(" "), entry] as const))(`${name} %s`, async (_label, { args, names }) => {
      const { io, stdout, stderr } = capturedIo();
      let thrown: unknown;
      try {
        await PROGRAMS[name](args, io);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(UsageError);
      expect(stdout()).toBe("");
      expect(stderr()).toBe("");
      const failure = describeFailure(name, thrown, { debug: true });
      expect(failure.exitCode).toBe(2);
      const lines = failure.text.split("\n");
      expect(lines).toHaveLength(3); // the error, the hint, and the final newline
      expect(lines[0]).toMatch(new RegExp(`^${name}: .*${names.replace(/-/g, "\\-")}(?![\\w-])`));
      expect(lines[1]).toBe(`Run '${name} -h' for usage.`);
      expect(lines[2]).toBe("");
    });
  }
});

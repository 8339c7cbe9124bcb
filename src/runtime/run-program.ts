import { describeFailure, wantsDebug } from "../cli/usage-error.ts";
import { type ProgramMain, processIo } from "./program-io.ts";

/**
 * Runs a program's main in this process. Any failure becomes one line naming what failed
 * (with the stack under -debug or THUNDERING_HERD_DEBUG=1) and its exit code; an error that
 * escapes later, from a callback, ends the program the same way instead of being lost.
 */
export function runProgram(name: string, main: ProgramMain, argv: readonly string[] = process.argv.slice(2)): void {
  const io = processIo();
  const debug = wantsDebug(argv, io.env);
  const fail = (error: unknown, context?: string) => {
    const failure = describeFailure(name, error, { debug, context });
    io.stderr.write(failure.text);
    process.exit(failure.exitCode);
  };
  process.on("uncaughtException", (error) => fail(error, "uncaught exception"));
  process.on("unhandledRejection", (error) => fail(error, "unhandled rejection"));
  Promise.resolve()
    .then(() => main(argv, io))
    .then((code) => {
      if (typeof code === "number") process.exit(code);
    }, fail);
}

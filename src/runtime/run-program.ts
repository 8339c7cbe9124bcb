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
  // Output that cannot be written (a full disk, an I/O error) must not pass for success.
  // A reader that went away (`| head`) is the exception: stop quietly, as a Go program
  // killed by SIGPIPE does.
  const outputFailed = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT_BROKEN_PIPE);
    fail(error, "writing standard output");
  };
  process.stdout.on("error", outputFailed);
  Promise.resolve()
    .then(() => main(argv, io))
    .then((code) => {
      // Exit once everything written so far has been handed to the system, or with its error.
      if (typeof code === "number") {
        process.stdout.write("", (error) => (error ? outputFailed(error) : process.exit(code)));
      }
    }, fail);
}

/** 128 + SIGPIPE, what a shell reports for a program killed by a broken pipe. */
const EXIT_BROKEN_PIPE = 141;

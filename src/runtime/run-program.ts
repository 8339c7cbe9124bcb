import { describeFailure } from "../cli/usage-error.ts";

/**
 * Runs a program's entry point. A number it returns is the exit code; nothing means the
 * program keeps running (a server, a herd) until it exits by itself. Any failure becomes
 * the one-line message of describeFailure and its exit code, never a stack trace.
 */
export function runProgram(name: string, main: () => number | void | Promise<number | void>): void {
  Promise.resolve()
    .then(main)
    .then(
      (code) => {
        if (typeof code === "number") process.exit(code);
      },
      (error: unknown) => {
        const failure = describeFailure(name, error);
        process.stderr.write(failure.text);
        process.exit(failure.exitCode);
      },
    );
}

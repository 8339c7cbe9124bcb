/**
 * A mistake in how a program was called. The entry point turns it into one line on
 * stderr, a hint to `-h`, and exit code 2 (Go's flag package does the same).
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly exitCode = 2;
}

/** An error that ends a program with one line and exit 1 (port in use, bad file, …). */
export class FatalError extends Error {
  override readonly name = "FatalError";
  readonly exitCode = 1;
}

export interface ErrorSink {
  writeErr(text: string): void;
}

/**
 * Turns any error escaping a program's start-up into the lines a user should see and the
 * exit code; never a stack trace.
 */
export function describeFailure(programName: string, error: unknown): { text: string; exitCode: number } {
  if (error instanceof UsageError) {
    return {
      text: `${programName}: ${error.message}\nRun '${programName} -h' for usage.\n`,
      exitCode: error.exitCode,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const exitCode = error instanceof FatalError ? error.exitCode : 1;
  return { text: `${programName}: ${message}\n`, exitCode };
}

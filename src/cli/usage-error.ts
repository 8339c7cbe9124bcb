/**
 * A message with every character a terminal would act on or hide written as an escape (`\x00`,
 * `\x1b`, `\u{202e}`): control and format characters, line and paragraph separators and lone
 * surrogates. A user's input quoted in an error then stays one printable line.
 */
export function printable(text: string): string {
  const escaped = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (char) => {
    const code = char.codePointAt(0)!;
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
  return excerpt(escaped, MAX_MESSAGE_CHARS);
}

/** The longest message shown: past it, what a user gave (a megabyte's key or value) is cut, not echoed. */
const MAX_MESSAGE_CHARS = 1000;

/** `text` as a message quotes it: the first `max` characters, and how many more there are. */
export function excerpt(text: string, max = 64): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * A mistake in how a program was called. The entry point turns it into one line on
 * stderr, a hint to `-h`, and exit code 2 (Go's flag package does the same).
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(message: string) {
    super(printable(message));
  }
  readonly exitCode = 2;
}

/**
 * For a flag table's `check`: the message of the error of class `refused` that `parse` threw, or
 * undefined when it took the text; an error of any other class is not the text's fault, and is thrown on.
 */
export function refusalOf(parse: () => unknown, refused: abstract new (...args: never[]) => Error): string | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    if (error instanceof refused) return error.message;
    throw error;
  }
}

/** An error that ends a program with one line and exit 1 (port in use, bad file, …). */
export class FatalError extends Error {
  override readonly name = "FatalError";
  constructor(message: string) {
    super(printable(message));
  }
  readonly exitCode = 1;
}

/**
 * A mistake in a file the user gave (a scenario file): one line that starts with the file and
 * line, as a compiler's does, and exit code 2, as a usage error.
 */
export class InputFileError extends Error {
  override readonly name = "InputFileError";
  constructor(message: string) {
    super(printable(message));
  }
  readonly exitCode = 2;
}

/** -debug (any spelling Go's flag package accepts) or THUNDERING_HERD_DEBUG=1 adds stacks to unexpected errors. */
export function wantsDebug(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): boolean {
  const fromEnv = env.THUNDERING_HERD_DEBUG;
  if (fromEnv !== undefined && fromEnv !== "" && fromEnv !== "0" && fromEnv !== "false") return true;
  return argv.some((arg) => /^--?debug(=(true|1|t|T|TRUE|True))?$/.test(arg));
}

export interface FailureOptions {
  /** Print the stack of an unexpected error. */
  readonly debug?: boolean;
  /** Where the error was caught, e.g. "uncaught exception". */
  readonly context?: string | undefined;
}

/**
 * Turns an error escaping a program into the lines a user should see and the exit code.
 * A usage error or a fatal condition the program names (port in use) is one line; an
 * unexpected error is one line that says so, and its stack only under -debug.
 */
export function describeFailure(programName: string, error: unknown, options: FailureOptions = {}): { text: string; exitCode: number } {
  if (error instanceof UsageError) {
    return {
      text: `${programName}: ${error.message}\nRun '${programName} -h' for usage.\n`,
      exitCode: error.exitCode,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof InputFileError) return { text: `${message}\n`, exitCode: error.exitCode };
  if (error instanceof FatalError) return { text: `${programName}: ${message}\n`, exitCode: error.exitCode };
  const what = options.context ?? "unexpected error";
  const name = error instanceof Error && error.name !== "Error" ? `${error.name}: ` : "";
  const stack = options.debug === true && error instanceof Error && error.stack !== undefined ? `${error.stack}\n` : "";
  const hint = options.debug === true ? "" : " (run with -debug for the stack)";
  return { text: `${programName}: ${what}: ${name}${message}${hint}\n${stack}`, exitCode: 1 };
}

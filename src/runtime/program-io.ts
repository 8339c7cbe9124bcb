/** Where a program writes, and what it reads of its environment: the real process, or a test's capture. */
export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgramIo {
  /** Contract lines: the reports people and scripts read. */
  readonly stdout: OutputStream;
  /** Diagnostics: start-up lines, progress, problems. */
  readonly stderr: OutputStream;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * A program's entry point. A number it returns is the exit code; nothing means it keeps
 * running (a server, a herd) until it exits by itself.
 */
export type ProgramMain = (argv: readonly string[], io: ProgramIo) => number | void | Promise<number | void>;

export function processIo(): ProgramIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

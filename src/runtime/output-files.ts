import { closeSync, existsSync, mkdirSync, openSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { FatalError } from "../cli/usage-error.ts";

/**
 * Result files (-out): a directory that cannot be made or a file that cannot be written is
 * the user's to fix (a path through a file, a read-only disk, a full disk), so it ends the
 * program with one line naming the path and the reason, not a stack.
 */
export function makeOutputDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new FatalError(`cannot create directory ${dir}: ${fileSystemReason(error)}`);
  }
}

export function writeOutputFile(path: string, content: string): void {
  try {
    writeFileSync(path, content);
  } catch (error) {
    throw new FatalError(`cannot write ${path}: ${fileSystemReason(error)}`);
  }
}

/**
 * Fails now, with writeOutputFile's line, when `path` could not be written later (a missing
 * directory, a directory, no permission), so that a long run does not end in that error. It
 * opens the file for appending, which changes nothing in a file that exists, and removes one it
 * had to create.
 */
export function checkOutputFileWritable(path: string): void {
  const existed = existsSync(path);
  try {
    closeSync(openSync(path, "a"));
  } catch (error) {
    throw new FatalError(`cannot write ${path}: ${fileSystemReason(error)}`);
  }
  if (!existed) rmSync(path, { force: true });
}

/** Removes a results directory that nothing was written to (a run interrupted before its end). */
export function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw error;
  }
}

/** "ENOTDIR: not a directory, mkdir '/x'" becomes "not a directory"; anything else is not a file-system error. */
function fileSystemReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string" || !(error instanceof Error)) throw error;
  return /^E[A-Z]+: ([^,]+),/.exec(error.message)?.[1] ?? error.message;
}

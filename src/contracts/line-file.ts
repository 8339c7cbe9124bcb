import { closeSync, openSync, readSync } from "node:fs";
import { ContractError, LineError } from "./json-line.ts";

/*
 * A file of lines read with bounded memory: a line longer than a cap, or a file longer than
 * another, is refused as soon as the cap is passed (`/dev/zero` is never read to its end,
 * and stat cannot tell: it says 0 bytes), with one line naming the file and the cap.
 */

export interface LineLimits {
  /** The longest line, bytes. */
  readonly maxLineBytes: number;
  /** The most bytes of the whole file. */
  readonly maxBytes: number;
}

/** Reads the next bytes into `buffer`, as many as there are up to its length; 0 at the end. */
export type ReadBytes = (buffer: Uint8Array) => number;

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

const bytesText = (bytes: number) => (bytes % (1 << 20) === 0 ? `${bytes / (1 << 20)} MiB` : `${bytes} bytes`);

/**
 * The lines of what `read` gives (without their newlines), one at a time; `name` and `what`
 * (the contract the file should hold) for the messages.
 */
export function* boundedLines(name: string, read: ReadBytes, limits: LineLimits, what: string): Generator<string> {
  const chunk = new Uint8Array(CHUNK_BYTES);
  const decoder = new TextDecoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let total = 0;
  let number = 1;
  const take = (piece: Uint8Array) => {
    pendingBytes += piece.length;
    if (pendingBytes > limits.maxLineBytes) {
      throw new LineError({ file: name, line: number }, `a line longer than ${bytesText(limits.maxLineBytes)} (is this ${what}?)`);
    }
    if (piece.length > 0) pending.push(piece.slice());
  };
  const finish = () => {
    const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    number++;
    return decoder.decode(bytes);
  };
  for (let got = read(chunk); got > 0; got = read(chunk)) {
    total += got;
    if (total > limits.maxBytes) throw new ContractError(`${name}: longer than ${bytesText(limits.maxBytes)} (is this ${what}?)`);
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1 && end < got; end = chunk.indexOf(NEWLINE, start)) {
      take(chunk.subarray(start, end));
      yield finish();
      start = end + 1;
    }
    take(chunk.subarray(start, got));
  }
  if (pendingBytes > 0) yield finish();
}

/** The lines of a file (`-`: standard input), as boundedLines reads them; a file that cannot be read is a ContractError naming it. */
export function* fileLines(name: string, limits: LineLimits, what: string): Generator<string> {
  const fd = name === "-" ? 0 : systemCall(name, () => openSync(name, "r"));
  try {
    yield* boundedLines(name, (buffer) => systemCall(name, () => readSync(fd, buffer)), limits, what);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/** `call`'s result; an error of the system (no such file, a directory) as a ContractError naming the file and the error's code. */
function systemCall<T>(name: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw new ContractError(`cannot read ${name}: ${code}`);
  }
}

import { open } from "node:fs/promises";
import { InputFileError } from "../cli/usage-error.ts";

/**
 * A file the user gave, as text: at most `limit` bytes are read, so a file past a reader's limit
 * is refused without reading the rest (the caller checks the length); a file that cannot be read
 * is an InputFileError of one line naming it and `what` it should have been.
 */
export async function readInputFile(file: string, what: string, limit: number): Promise<string> {
  try {
    return await readAtMost(file, limit);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory, not a file" : (code ?? String(error));
    throw new InputFileError(`${file}: cannot read the ${what}: ${why}`);
  }
}

async function readAtMost(file: string, limit: number): Promise<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(limit);
    let length = 0;
    while (length < limit) {
      const { bytesRead } = await handle.read(buffer, length, limit - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.toString("utf8", 0, length);
  } finally {
    await handle.close();
  }
}

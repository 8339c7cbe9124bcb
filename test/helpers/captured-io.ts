import type { ProgramIo } from "../../src/runtime/program-io.ts";

/** A program's io that keeps what it writes, for running a main in process. */
export function capturedIo(): { io: ProgramIo; stdout: () => string; stderr: () => string } {
  let stdout = "";
  let stderr = "";
  return {
    io: { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProgramMain } from "../src/runtime/program-io.ts";

/**
 * A program's -json answer, run in process with its files in a scratch folder that is removed
 * after, and without the report's path (a scratch folder, not a figure). A program that fails
 * ends the script with its exit code, its lines on stderr.
 */
export async function programJson(main: ProgramMain, args: readonly string[], scratchPrefix: string): Promise<Record<string, unknown>> {
  const out = mkdtempSync(join(tmpdir(), scratchPrefix));
  let stdout = "";
  try {
    const code = await main([...args, "-json", "-out", out], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: process.stderr,
      env: process.env,
    });
    if (typeof code === "number" && code !== 0) process.exit(code);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const result = JSON.parse(stdout) as Record<string, unknown>;
  delete result.report;
  return result;
}

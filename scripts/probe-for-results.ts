import { writeFileSync } from "node:fs";
import { main } from "../src/probe/main.ts";

/**
 * The probe run in this process for a results file: what it prints goes to stdout as it would
 * (once it ends), and comes back as lines with its exit code. Its stderr goes straight through.
 */
export async function probeLines(args: readonly string[]): Promise<{ readonly code: number; readonly lines: string[] }> {
  let stdout = "";
  const code = await main(args, { stdout: { write: (text: string) => (stdout += text) }, stderr: process.stderr, env: process.env });
  process.stdout.write(stdout);
  return { code, lines: stdout.trimEnd().split("\n") };
}

/** A results file as the scripts write it: indented JSON, and a line saying where. */
export function writeResultsFile(file: string, figures: unknown): void {
  writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
  process.stderr.write(`wrote ${file}\n`);
}

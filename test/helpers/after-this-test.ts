import { onTestFinished } from "vitest";

const pending: (() => unknown)[] = [];

/**
 * What was made outside a test (in a beforeAll) is cleaned up after the next test ends, in
 * whichever file: test/helpers/each-file.ts, a setup file, registers this after each test of every
 * file (both projects reuse their workers from file to file, so a hook registered when this module
 * is imported would run for the first importing file only). onTestFinished belongs to the test that calls it.
 */
export async function runPendingCleanUps(): Promise<void> {
  for (const cleanUp of pending.splice(0)) await cleanUp();
}

/** Runs `cleanUp` once the test that calls this ends, passed or failed (or after the next test, outside one). */
export function afterThisTest(cleanUp: () => unknown): void {
  try {
    onTestFinished(async () => {
      await cleanUp();
    });
  } catch {
    // Not inside a test (a beforeAll): the next test's end.
    pending.push(cleanUp);
  }
}

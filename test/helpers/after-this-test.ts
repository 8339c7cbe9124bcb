import { afterEach, onTestFinished } from "vitest";

const pending: (() => unknown)[] = [];

/*
 * Hooks registered when a helper module is imported run for the files of that one import: the
 * unit project reuses its workers from file to file (isolate: false), so a later file that
 * imports the helper again gets the cached module and none of its hooks. onTestFinished belongs
 * to the test that calls it, in whichever file; what is made outside a test (in a beforeAll)
 * waits for the next test's end, in a file that imported this module first.
 */
afterEach(async () => {
  for (const cleanUp of pending.splice(0)) await cleanUp();
});

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

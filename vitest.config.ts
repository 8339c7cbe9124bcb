import { defineConfig } from "vitest/config";

/**
 * Projects run one after the other (sequence.groupOrder): first the unit tests, all at once;
 * then the end-to-end tests, one file at a time. So no end-to-end test ever runs beside a
 * unit test or beside another end-to-end test, and the 2 cores are theirs. `npm test` runs
 * the unit project beside the type-check and lint (neither measures time), then the e2e
 * project alone; `npm run validate` runs the third, the long real-time comparisons of the
 * simulator with the real programs (test/README.md).
 */
export default defineConfig({
  test: {
    projects: [
      {
        // Pure code on injected clocks, and in-process servers on port 0: in parallel, one worker
        // per core (vitest's default leaves one core idle), and the workers reused from file to file
        // (isolate: false) so that each file does not import the sources again: 96 s → 34 s here.
        // That needs every unit test to undo what it changes (fake timers, listeners). The limit
        // bounds a hung test (worker threads start slowly on a loaded machine), never speed.
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          sequence: { groupOrder: 0 },
          testTimeout: 30_000,
          isolate: false,
          maxWorkers: 2,
          setupFiles: ["test/helpers/each-file.ts"],
        },
      },
      {
        // Real programs as processes, one file at a time, once every unit test is done, in one
        // worker reused from file to file (isolate: false: the helpers are imported once). Time
        // limits are generous: they bound a hung test, never measure speed.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          sequence: { groupOrder: 1 },
          fileParallelism: false,
          isolate: false,
          setupFiles: ["test/helpers/each-file.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Validation experiments of real programs, one file at a time, last.
        test: {
          name: "validate",
          include: ["test/validate/**/*.test.ts"],
          sequence: { groupOrder: 2 },
          setupFiles: ["test/helpers/each-file.ts"],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});

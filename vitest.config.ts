import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        // Pure code on injected clocks, and in-process servers on port 0: in parallel.
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        // Real programs as processes: one file at a time, so they never compete for the 2 cores
        // with each other. Time limits are generous: they bound a hung test, never measure speed.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});

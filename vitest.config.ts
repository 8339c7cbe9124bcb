import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // End-to-end tests spawn real servers and clients; give them room on a loaded 2-core box.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

import { afterEach } from "vitest";
import { runPendingCleanUps } from "./after-this-test.ts";
import { stopSpawnedPrograms } from "./spawn-cli.ts";

/*
 * Run before each test file of every project (vitest.config.ts setupFiles), so that its hooks are
 * registered for every file, where the workers are reused from file to file and a helper module is
 * imported once. The programs are stopped first: a clean-up may remove the folder one writes to.
 */
afterEach(async () => {
  await stopSpawnedPrograms();
  await runPendingCleanUps();
});

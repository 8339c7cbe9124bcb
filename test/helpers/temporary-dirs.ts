import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterThisTest } from "./after-this-test.ts";

/** A fresh directory under the system's temporary directory, removed after the test. */
export function temporaryDir(prefix = "thundering-herd-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterThisTest(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

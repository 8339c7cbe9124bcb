import { statSync, utimesSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, spawnCli } from "../helpers/spawn-cli.ts";

const bundleOf = (name: string) => resolve(REPO_ROOT, "node_modules/.cache/thundering-herd", `${name}.mjs`);

describe("root shims", () => {
  it("run a bundle of the sources and rebuild it when a source is newer", async () => {
    expect(await spawnCli("sim", ["-h"]).exited).toBe(0);
    const before = statSync(bundleOf("sim")).mtimeMs;
    // A source edited after the bundle was built: the next start rebuilds it.
    const source = resolve(REPO_ROOT, "src/options/sim.ts");
    const future = new Date(Date.now() + 2_000);
    utimesSync(source, future, future);
    const run = spawnCli("sim", ["-h"]);
    expect(await run.exited).toBe(0);
    expect(run.stdoutLines.join("\n")).toContain("-find-critical-outage");
    expect(statSync(bundleOf("sim")).mtimeMs).toBeGreaterThan(before);
    // Unchanged sources: the bundle is reused as it is.
    const rebuilt = statSync(bundleOf("sim")).mtimeMs;
    utimesSync(source, new Date(rebuilt - 10_000), new Date(rebuilt - 10_000));
    expect(await spawnCli("sim", ["-h"]).exited).toBe(0);
    expect(statSync(bundleOf("sim")).mtimeMs).toBe(rebuilt);
  });
});

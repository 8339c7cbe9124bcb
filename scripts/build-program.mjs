// One program of a checkout (its src/bin/<name>.ts, and the worker threads' entry where the
// checkout has one) built into single ES modules, as the root shims run them: dependencies
// external, resolved from the node_modules above `outdir`. scripts/bundle.mjs builds the shims'
// bundles with it; the simulator's benchmark builds this checkout and an older commit alike.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { build } from "esbuild";

/** Builds `name` (and worker-entry, where `root` has one) from `root` into `outdir` as <name>.mjs. */
export async function buildProgram(root, name, outdir) {
  const entries = [{ in: resolve(root, "src/bin", `${name}.ts`), out: name }];
  const workerEntry = resolve(root, "src/bin/worker-entry.ts");
  if (existsSync(workerEntry)) entries.push({ in: workerEntry, out: "worker-entry" });
  await build({
    entryPoints: entries,
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
  });
}

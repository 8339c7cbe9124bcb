// Builds one program (src/bin/<name>.ts) into a single ES module under
// node_modules/.cache/thundering-herd/, so the shims can run plain Node: no TypeScript
// loader thread (about 35 MB less per process) and a faster start. Dependencies stay
// external and resolve from the project's node_modules. The dashboard's page files go
// beside the bundle, where the dashboard looks for them (next to its own module).
import { copyFileSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const name = process.argv[2];
if (!["server", "client", "sim"].includes(name ?? "")) {
  process.stderr.write("usage: node scripts/bundle.mjs server|client|sim\n");
  process.exit(2);
}
const outfile = resolve(root, "node_modules/.cache/thundering-herd", `${name}.mjs`);
// Several shims may build at once (tests start many): each writes its own file, then renames.
const temporary = `${outfile}.${process.pid}.tmp`;
try {
  await build({
    entryPoints: [resolve(root, "src/bin", `${name}.ts`)],
    outfile: temporary,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
  });
  renameSync(temporary, outfile);
  if (name === "sim") copyPage(resolve(root, "src/dashboard/page"), resolve(dirname(outfile), "page"));
} catch (error) {
  process.stderr.write(`${name}: could not build ${outfile}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

/** Copies each file by a rename of its own copy, so a program starting meanwhile never reads half a file. */
function copyPage(from, to) {
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(from)) {
    copyFileSync(resolve(from, file), `${resolve(to, file)}.${process.pid}.tmp`);
    renameSync(`${resolve(to, file)}.${process.pid}.tmp`, resolve(to, file));
  }
}

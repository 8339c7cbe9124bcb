// Builds one program (src/bin/<name>.ts) into a single ES module under
// node_modules/.cache/thundering-herd/, so the shims can run plain Node: no TypeScript
// loader thread (about 35 MB less per process) and a faster start. Dependencies stay
// external and resolve from the project's node_modules. The worker threads' entry
// (src/bin/worker-entry.ts) is built beside it as worker-entry.mjs, where the bundled
// worker pool looks for it. The dashboard's page files go beside the bundle too, where the
// dashboard looks for them (next to its own module), and the charts' scripts of src/report.
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildProgram } from "./build-program.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const name = process.argv[2];
if (!["server", "client", "sim", "merge", "probe"].includes(name ?? "")) {
  process.stderr.write("usage: node scripts/bundle.mjs server|client|sim|merge|probe\n");
  process.exit(2);
}
const outdir = resolve(root, "node_modules/.cache/thundering-herd");
// Several shims may build at once (tests start many): each builds into its own directory, then renames.
const temporary = join(outdir, `.build-${process.pid}`);
try {
  mkdirSync(temporary, { recursive: true });
  await buildProgram(root, name, temporary);
  // The worker entry first: a program that finds itself rebuilt also finds its workers' entry.
  for (const out of ["worker-entry", name]) renameSync(join(temporary, `${out}.mjs`), join(outdir, `${out}.mjs`));
  if (name === "sim") {
    copyPage(resolve(root, "src/dashboard/page"), resolve(outdir, "page"));
    // The charts' shared script, where src/report/chart-files.ts looks for it from the bundle.
    copyFiles(resolve(root, "src/report"), outdir, ["charts.js", "report-charts.js"]);
  }
} catch (error) {
  process.stderr.write(
    `${name}: could not build ${join(outdir, `${name}.mjs`)}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  // Not process.exit: the temporary directory goes first, in finally.
  process.exitCode = 1;
} finally {
  rmSync(temporary, { recursive: true, force: true });
}

function copyPage(from, to) {
  copyFiles(from, to, readdirSync(from));
}

/** Copies each file by a rename of its own copy, so a program starting meanwhile never reads half a file. */
function copyFiles(from, to, files) {
  mkdirSync(to, { recursive: true });
  for (const file of files) {
    copyFileSync(resolve(from, file), `${resolve(to, file)}.${process.pid}.tmp`);
    renameSync(`${resolve(to, file)}.${process.pid}.tmp`, resolve(to, file));
  }
}

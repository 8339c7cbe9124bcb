/**
 * `npm run bench [-- name ... [argument ...]]`: runs every scripts/bench-*.ts in name order, each in
 * its own Node process with inherited stdio, or only those whose file name contains one of the
 * names (`npm run bench -- server`). The other arguments go to each benchmark run, which reads
 * them as its sections or rows (`npm run bench -- sim full`, `npm run bench -- client capacity`).
 * Exits non-zero if any benchmark fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { resolve } from "node:path";

const REPO_ROOT = resolve(import.meta.dirname, "..");
const SCRIPTS_DIR = resolve(REPO_ROOT, "scripts");
const REGISTER_TSX = resolve(REPO_ROOT, "src/register-tsx.mjs");

const all = readdirSync(SCRIPTS_DIR)
  .filter((name) => /^bench-.+\.ts$/.test(name))
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const names = (argument: string) => all.some((name) => name.includes(argument));
const args = process.argv.slice(2).filter((argument) => argument !== "--");
const filters = args.filter(names);
const passed = args.filter((argument) => !names(argument));
const selected = filters.length === 0 && passed.length === 0 ? all : all.filter((name) => filters.some((filter) => name.includes(filter)));

if (selected.length === 0) {
  const available = all.length === 0 ? "none" : all.join(", ");
  process.stderr.write(`bench: no benchmark matches ${args.map((f) => `'${f}'`).join(" or ")} (available: ${available})\n`);
  process.exit(2);
}

let current: ChildProcess | undefined;
let interrupted = false;
// Ctrl-C reaches the benchmark too (same process group); a SIGINT sent to this process
// alone is passed on, by pid, so the benchmark can stop its own servers before exiting.
const onSignal = (signal: NodeJS.Signals) => {
  interrupted = true;
  if (current?.pid !== undefined && current.exitCode === null && current.signalCode === null) {
    try {
      process.kill(current.pid, signal);
    } catch {
      // already gone
    }
  }
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

function run(file: string): Promise<number | string> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, ["--import", REGISTER_TSX, resolve(SCRIPTS_DIR, file), ...passed], {
      cwd: REPO_ROOT,
      stdio: "inherit",
    });
    current = child;
    child.on("error", (error) => resolveRun(`could not start: ${error.message}`));
    child.on("exit", (code, signal) => resolveRun(code ?? signal ?? "unknown"));
  });
}

const failures: string[] = [];
for (const file of selected) {
  if (interrupted) break;
  process.stdout.write(`\n=== ${file} ===\n`);
  const started = performance.now();
  const outcome = await run(file);
  current = undefined;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (interrupted) {
    process.stdout.write(`=== ${file}: interrupted (${seconds} s) ===\n`);
  } else if (outcome === 0) {
    process.stdout.write(`=== ${file}: ok (${seconds} s) ===\n`);
  } else {
    process.stdout.write(`=== ${file}: FAILED (${typeof outcome === "number" ? `exit code ${outcome}` : outcome}, ${seconds} s) ===\n`);
    failures.push(file);
  }
}

if (interrupted) {
  process.stderr.write("bench: interrupted\n");
  process.exit(130);
}
if (failures.length > 0) {
  process.stderr.write(`bench: ${failures.length} of ${selected.length} failed: ${failures.join(", ")}\n`);
  process.exit(1);
}

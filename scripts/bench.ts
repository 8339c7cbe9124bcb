/**
 * `npm run bench [-- name [argument ...] ...]`: runs every scripts/bench-*.ts in name order, each
 * in its own Node process with inherited stdio, or only those named (`npm run bench -- server`,
 * the part of the file name after `bench-`). The words after a name go to that benchmark, which
 * reads them as its sections or rows (`npm run bench -- sim full`, `npm run bench -- client
 * capacity`). Exits non-zero if any benchmark fails.
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
const nameOf = (file: string) => file.slice("bench-".length, -".ts".length);

/** Each benchmark named, with the words that follow its name; every benchmark when none is named. */
function plan(args: readonly string[]): Map<string, string[]> {
  if (args.length === 0) return new Map(all.map((file) => [file, []]));
  const planned = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const argument of args) {
    const file = all.find((candidate) => nameOf(candidate) === argument);
    if (file !== undefined) {
      current = planned.get(file) ?? [];
      planned.set(file, current);
    } else if (current === undefined) {
      const available = all.length === 0 ? "none" : all.map(nameOf).join(", ");
      process.stderr.write(
        `bench: no benchmark named '${argument}' (benchmarks: ${available}; a benchmark's words come after its name, e.g. sim full)\n`,
      );
      process.exit(2);
    } else {
      current.push(argument);
    }
  }
  return planned;
}

const planned = plan(process.argv.slice(2).filter((argument) => argument !== "--"));
const selected = all.filter((file) => planned.has(file));

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
    const child = spawn(process.execPath, ["--import", REGISTER_TSX, resolve(SCRIPTS_DIR, file), ...(planned.get(file) ?? [])], {
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

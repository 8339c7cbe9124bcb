import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Provenance } from "../report/summary-file.ts";

/** The nearest folder above this file whose package.json is this package's: the checkout, or the installed package. */
function packageRoot(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "thundering-herd") return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function gitCommit(root: string): string | undefined {
  if (!existsSync(join(root, ".git"))) return undefined;
  try {
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const commit = git("rev-parse", "HEAD");
    return git("status", "--porcelain", "--untracked-files=no") === "" ? commit : `${commit}+dirty`;
  } catch {
    // No git on this machine, or not a repository after all: the version still says which code it was.
    return undefined;
  }
}

/** This run's provenance (see Provenance). */
export function provenance(now: Date = new Date()): Provenance {
  const root = packageRoot();
  const version =
    root === undefined ? "unknown" : (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  const processors = cpus();
  return {
    commit: (root === undefined ? undefined : gitCommit(root)) ?? `none (package ${version})`,
    version,
    machine: `${processors.length} x ${processors[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform} ${process.arch}`,
    node: process.version,
    date: now.toISOString(),
  };
}

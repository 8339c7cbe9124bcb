import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO_ROOT = resolve(import.meta.dirname, "..");

/** The removal of every checkout not yet removed: a benchmark's Ctrl-C handler calls removeOpenCheckouts. */
const open = new Set<() => void>();

/** Removes every baseline checkout still there (a benchmark interrupted mid-pairs). */
export function removeOpenCheckouts(): void {
  for (const remove of [...open]) remove();
}

/** An older commit checked out beside this one for a benchmark's pairs. */
export interface BaselineCheckout {
  readonly dir: string;
  readonly remove: () => void;
}

/**
 * A git worktree of `commit` in a temporary folder, sharing this checkout's node_modules (the
 * older commits' dependencies are a subset), so that a bundle built into it finds its packages;
 * undefined, with the reason written, if git cannot make one (a shallow clone, for instance).
 * `remove` takes the folder and all that was put in it.
 */
export function baselineCheckout(commit: string, write: (text: string) => void): BaselineCheckout | undefined {
  const parent = mkdtempSync(join(tmpdir(), "thundering-herd-bench-baseline-"));
  const dir = join(parent, "checkout");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  try {
    git("worktree", "add", "--detach", dir, commit);
  } catch (error) {
    write(`  no checkout of ${commit}: ${((error as { stderr?: Buffer }).stderr ?? "").toString().trim()}\n`);
    rmSync(parent, { recursive: true, force: true });
    return undefined;
  }
  const remove = () => {
    open.delete(remove);
    try {
      git("worktree", "remove", "--force", dir);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  };
  open.add(remove);
  try {
    symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, remove };
}

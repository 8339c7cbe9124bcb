import { readFileSync } from "node:fs";

/**
 * The state letter of a process from Linux's /proc (R running, S sleeping, T stopped, …),
 * or undefined once it is gone: lets a test wait until a SIGSTOP has taken effect.
 */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses; the state follows the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ", 1)[0];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

import { readdirSync, readFileSync } from "node:fs";

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of a process group still exists (signal 0 to the group). */
export function isGroupRunning(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The state letter (T: stopped) of every living process of a group, read from /proc: a zombie has ended, its parent not told yet. */
export function groupStates(group: number): string[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(fields[2]) === group && fields[0] !== "Z" ? [fields[0]!] : [];
      } catch {
        return [];
      }
    });
}

import { readdirSync, readFileSync } from "node:fs";

/**
 * File-descriptor pressure, read from Linux's /proc. libuv answers an accept() that fails
 * with EMFILE by silently accepting and closing the connection (its "EMFILE trick"), so a
 * server never sees the error; it has to look at its own descriptors to tell a user.
 */
export interface FdUsage {
  readonly open: number;
  readonly limit: number;
  readonly exhausted: boolean;
}

/** The soft RLIMIT_NOFILE, or undefined where /proc is not available. */
export function readFdLimit(): number | undefined {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
    if (match === null || match[1] === "unlimited") return undefined;
    return Number(match[1]);
  } catch (error) {
    // No /proc (not Linux): nothing to watch.
    if ((error as NodeJS.ErrnoException).code === undefined) throw error;
    return undefined;
  }
}

export function readFdUsage(limit: number): FdUsage | undefined {
  try {
    // readdir holds one descriptor of its own while it reads.
    const open = readdirSync("/proc/self/fd").length - 1;
    // libuv keeps one spare descriptor for its EMFILE trick; at limit-1 new connections are dropped.
    return { open, limit, exhausted: open >= limit - 1 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EMFILE") return { open: limit, limit, exhausted: true };
    return undefined;
  }
}

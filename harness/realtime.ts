import { spawnSync } from "node:child_process";

/**
 * `chrt -r 10` where it exists and this user may use it (tried on `true`), else nothing: real-time
 * priority keeps the real client up with its schedule on a busy shared machine (measured at load
 * average 13 with examples/01: no window behind, where ordinary priority fell behind).
 */
export const REALTIME_PREFIX: readonly string[] = spawnSync("chrt", ["-r", "10", "true"]).status === 0 ? ["chrt", "-r", "10"] : [];

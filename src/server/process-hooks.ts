import type { ProgramIo } from "../runtime/program-io.ts";
import { readFdLimit, readFdUsage } from "../runtime/fd-usage.ts";
import type { ServerHooks } from "./http-server.ts";

/*
 * What a server process says of itself, in one process or as one of -workers: problems at the
 * server's level (EMFILE storms), running out of descriptors, and running out of memory.
 */

/** Server-level problems (EMFILE storms) are reported at most this often. */
const PROBLEM_REPORT_INTERVAL_MS = 1_000;

/** Problems at most once a second (with how many were left unsaid), and the modelled out-of-memory exit. */
export function processHooks(io: ProgramIo): ServerHooks {
  let lastProblemAt = -Infinity;
  let suppressed = 0;
  return {
    onProblem: (message) => {
      const now = Date.now();
      if (now - lastProblemAt < PROBLEM_REPORT_INTERVAL_MS) {
        suppressed++;
        return;
      }
      const more = suppressed > 0 ? ` (and ${suppressed} more since the last report)` : "";
      io.stderr.write(`server: ${message}${more}\n`);
      lastProblemAt = now;
      suppressed = 0;
    },
    onOutOfMemory: (event) => {
      io.stderr.write(
        `server: out of memory: ${event.inService} requests in service, the -max-in-service limit; ` +
          "stopping, as a Node server whose heap is full does\n",
      );
      process.exit(1);
    },
  };
}

/** Descriptors the process holds besides client connections (stdio, epoll, the listener, …), with room to spare. */
const NON_CONNECTION_DESCRIPTORS = 64;

/**
 * Says when the process runs out of descriptors (new connections are being dropped) and
 * when it has recovered: at most one line a second, only on a change. Listing
 * /proc/self/fd costs milliseconds with 10 000 sockets open, so it is only read when the
 * open connections come near the limit.
 */
export function watchFileDescriptors(openConnections: () => number, say: (message: string) => void): NodeJS.Timeout | undefined {
  const limit = readFdLimit();
  if (limit === undefined) return undefined;
  let exhausted = false;
  return setInterval(() => {
    if (!exhausted && openConnections() + NON_CONNECTION_DESCRIPTORS < limit) return;
    const usage = readFdUsage(limit);
    if (usage === undefined || usage.exhausted === exhausted) return;
    exhausted = usage.exhausted;
    say(
      exhausted
        ? `out of file descriptors (${usage.open} of ${usage.limit} open): new connections are dropped until some close`
        : `file descriptors available again (${usage.open} of ${usage.limit} open)`,
    );
  }, PROBLEM_REPORT_INTERVAL_MS).unref();
}

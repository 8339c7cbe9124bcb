import { formatDuration } from "../cli/duration.ts";
import { formatStampMilli } from "../cli/timestamp.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";
import { type ActiveFault, formatActiveFaults } from "../model/faults/control.ts";

/**
 * The reference server's once-a-second line:
 * `Jun 21 22:11:08.519: concurrency:    8, last delay: 100ms`
 * The queue model's follows it with its queue and threads (concurrency counts both, last
 * delay is the time in the server of the request answered last):
 * `Jun 21 22:11:08.519: concurrency:   12, last delay: 40ms, queue: 4, threads busy: 8/8`
 * and while the fault control (-admin-listen) has faults on, with them:
 * `…, last delay: 100ms, faults: capacity*0.5 errors*0.2`
 */
export function formatServerLine(
  epochMs: number,
  snapshot: ServiceSnapshot,
  timeZone: "local" | "utc" = "local",
  faults: readonly ActiveFault[] = [],
): string {
  const concurrency = String(snapshot.concurrency).padStart(4, " ");
  const line = `${formatStampMilli(epochMs, timeZone)}: concurrency: ${concurrency}, last delay: ${formatDuration(snapshot.lastDelayMs)}`;
  const withThreads =
    snapshot.threads === undefined
      ? line
      : `${line}, queue: ${snapshot.queueLength}, threads busy: ${snapshot.threadsBusy}/${snapshot.threads}`;
  return faults.length === 0 ? withThreads : `${withThreads}, faults: ${formatActiveFaults(faults).replaceAll(", ", " ")}`;
}

/** The server's totals, for a summary: what it did with every request it was sent. */
export function serverTotalsReport(snapshot: ServiceSnapshot) {
  return {
    admitted: snapshot.admitted,
    served: snapshot.served,
    errorsInjected: snapshot.errorsInjected,
    abandoned: snapshot.abandoned,
    cancelled: snapshot.cancelled,
    expired: snapshot.expired,
    shed: snapshot.shed,
    inService: snapshot.concurrency,
    abandonedInService: snapshot.abandonedInService,
  };
}

/**
 * The same totals as one line:
 * `served 120 (errors injected 3), abandoned 0, cancelled 0, expired 2, shed 5, still in service 1 (0 for nobody)`.
 */
export function formatServerTotals(snapshot: ServiceSnapshot): string {
  return (
    `served ${snapshot.served} (errors injected ${snapshot.errorsInjected}), abandoned ${snapshot.abandoned}, ` +
    `cancelled ${snapshot.cancelled}, expired ${snapshot.expired}, shed ${snapshot.shed}, ` +
    `still in service ${snapshot.concurrency} (${snapshot.abandonedInService} for nobody)`
  );
}

import { formatDuration } from "../cli/duration.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";
import type { ServerLine } from "./server-line.ts";
import type { ActiveFault } from "../model/faults/control.ts";

/* The writer of the server's line; its contract (schema, type, reader) is server-line.ts. */

/** The line for one snapshot of the service; `faults` those the fault control set, when it is on. */
export function serverLine(epochMs: number, snapshot: ServiceSnapshot, faults?: readonly ActiveFault[]): ServerLine {
  return {
    time: new Date(epochMs).toISOString(),
    epochMs,
    concurrency: snapshot.concurrency,
    lastDelayMs: Number.isFinite(snapshot.lastDelayMs) ? snapshot.lastDelayMs : null,
    lastDelay: formatDuration(snapshot.lastDelayMs),
    peakConcurrency: snapshot.peakConcurrency,
    peakDelayMs: Number.isFinite(snapshot.peakDelayMs) ? snapshot.peakDelayMs : null,
    admitted: snapshot.admitted,
    served: snapshot.served,
    abandoned: snapshot.abandoned,
    abandonedInService: snapshot.abandonedInService,
    cancelled: snapshot.cancelled,
    shed: snapshot.shed,
    expired: snapshot.expired,
    errorsInjected: snapshot.errorsInjected,
    ...(snapshot.threads === undefined
      ? {}
      : { queueLength: snapshot.queueLength, threadsBusy: snapshot.threadsBusy, threads: snapshot.threads }),
    ...(faults === undefined ? {} : { faults: faults.map(({ kind, factor }) => ({ kind, factor })) }),
    ...(snapshot.upstream === undefined ? {} : { upstream: { ...snapshot.upstream } }),
  };
}

/** serverLine() as the text the server prints. */
export function formatServerJson(epochMs: number, snapshot: ServiceSnapshot, faults?: readonly ActiveFault[]): string {
  return JSON.stringify(serverLine(epochMs, snapshot, faults));
}

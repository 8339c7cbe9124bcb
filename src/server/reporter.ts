import { formatDuration } from "../cli/duration.ts";
import { formatStampMilli } from "../cli/timestamp.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";

/**
 * The reference server's once-a-second line:
 * `Jun 21 22:11:08.519: concurrency:    8, last delay: 100ms`
 */
export function formatServerLine(epochMs: number, snapshot: ServiceSnapshot, timeZone: "local" | "utc" = "local"): string {
  const concurrency = String(snapshot.concurrency).padStart(4, " ");
  return `${formatStampMilli(epochMs, timeZone)}: concurrency: ${concurrency}, last delay: ${formatDuration(snapshot.lastDelayMs)}`;
}

/** The same report as one JSON object; an infinite delay is written as null. */
export function formatServerJson(epochMs: number, snapshot: ServiceSnapshot): string {
  return JSON.stringify(serverReport(epochMs, snapshot));
}

export function serverReport(epochMs: number, snapshot: ServiceSnapshot) {
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
    cancelled: snapshot.cancelled,
    shed: snapshot.shed,
  };
}

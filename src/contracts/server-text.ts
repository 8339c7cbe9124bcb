import { formatDuration } from "../cli/duration.ts";
import { formatStampMilli } from "../cli/timestamp.ts";
import type { ServiceSnapshot } from "../model/service-queue.ts";
import type { UpstreamSnapshot } from "../model/servers/server-model.ts";
import { type ActiveFault, formatActiveFaults } from "../model/faults/control.ts";

/**
 * The reference server's once-a-second line:
 * `Jun 21 22:11:08.519: concurrency:    8, last delay: 100ms`
 * The queue model's follows it with its queue and threads (concurrency counts both, last
 * delay is the time in the server of the request answered last):
 * `Jun 21 22:11:08.519: concurrency:   12, last delay: 40ms, queue: 4, threads busy: 8/8`
 * a middle tier (-upstream) adds its calls: those in flight now (each holding a thread), the
 * attempts it sent and the calls that failed for good, since it started:
 * `…, threads busy: 8/8, upstream: 8 calling, 412 attempts, 3 failed`
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
  const upstream = snapshot.upstream;
  const withUpstream =
    upstream === undefined
      ? withThreads
      : `${withThreads}, upstream: ${upstream.inFlight} calling, ${upstream.attempts} attempts, ${upstream.failures} failed`;
  return faults.length === 0 ? withUpstream : `${withUpstream}, faults: ${formatActiveFaults(faults).replaceAll(", ", " ")}`;
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
    `still in service ${snapshot.concurrency} (${snapshot.abandonedInService} for nobody)` +
    (snapshot.upstream === undefined ? "" : `; upstream: ${formatUpstreamTotals(snapshot.upstream)}`)
  );
}

/** A middle tier's calls as one phrase: `requests 40, attempts 120 (ok 0, error 120, timedout 0), refused 0, failed 40`. */
export function formatUpstreamTotals(upstream: UpstreamSnapshot): string {
  return (
    `requests ${upstream.requests}, attempts ${upstream.attempts} ` +
    `(ok ${upstream.attemptsOk}, error ${upstream.attemptsError}, timedout ${upstream.attemptsTimedout}), ` +
    `refused ${upstream.refused}, failed ${upstream.failures}`
  );
}

import type { LatencySummary } from "./latency-histogram.ts";

/**
 * Whether a load generator kept up with its own schedule in a window. A client that sends
 * late offers the server less load than planned, and one whose requests wait in its own
 * event loop measures its own lag as the server's latency and timeouts: its window is not
 * evidence about the server ("coordinated omission"). A window is behind when the attempts'
 * lateness p99 is above the threshold, when the event loop's delay p50 is (a loop late most
 * of the window, not one burst of answers at a resume, which the lateness shows if it
 * delayed sends), or when an attempt could not be sent at all (no file descriptor, no local
 * port).
 */

/** The default threshold: 10 % of the timeout, at least 100 ms. */
export const BEHIND_MIN_THRESHOLD_MS = 100;
export const BEHIND_TIMEOUT_SHARE = 0.1;

export function defaultBehindThresholdMs(timeoutMs: number): number {
  return Math.max(BEHIND_MIN_THRESHOLD_MS, BEHIND_TIMEOUT_SHARE * timeoutMs);
}

export interface ClientLag {
  /** How late the attempts went out; undefined when none went out. */
  readonly lateness: LatencySummary | undefined;
  /** The event loop's delay (the worst thread's); undefined where not measured. */
  readonly eventLoopDelay: LatencySummary | undefined;
  /** Attempts that could not be sent. */
  readonly notSent: number;
  /**
   * What the server did with the attempts that were sent, in the same window: a client whose
   * descriptors ran out because the server holds its connections says both.
   */
  readonly server?: {
    /** Attempts sent and not answered yet at the window's end: each holds a descriptor. */
    readonly inFlight: number;
    /** The latency of the window's answers; undefined for none. */
    readonly answers: LatencySummary | undefined;
    readonly timedOut: number;
  };
}

const ms = (value: number) => `${Math.round(value)} ms`;

/** Why the client was behind in a window, in one phrase with its figures; undefined when it kept up. */
export function behindReason(lag: ClientLag, thresholdMs: number): string | undefined {
  const reasons: string[] = [];
  if (lag.lateness !== undefined && lag.lateness.p99Ms > thresholdMs)
    reasons.push(`attempts sent late: lateness p99 ${ms(lag.lateness.p99Ms)} (max ${ms(lag.lateness.maxMs)}) above ${ms(thresholdMs)}`);
  if (lag.eventLoopDelay !== undefined && lag.eventLoopDelay.p50Ms > thresholdMs)
    reasons.push(`event-loop delay p50 ${ms(lag.eventLoopDelay.p50Ms)} above ${ms(thresholdMs)}`);
  if (lag.notSent > 0)
    reasons.push(`${lag.notSent} attempts could not be sent (no file descriptor or local port)${serverSide(lag.server)}`);
  return reasons.length === 0 ? undefined : reasons.join("; ");
}

/** The server's side of a window whose attempts could not all be sent: what held the descriptors, and how it answered. */
function serverSide(server: ClientLag["server"]): string {
  if (server === undefined) return "";
  const answers =
    server.answers === undefined ? "no answer from it" : `its answers p50 ${ms(server.answers.p50Ms)}, p99 ${ms(server.answers.p99Ms)}`;
  return ` while ${server.inFlight} sent were waiting on the server (${answers}, ${server.timedOut} timed out in the window)`;
}

/** Several threads' delays as one: the worst thread's, figure by figure (percentiles of separate loops do not add). */
export function worstDelay(delays: readonly (LatencySummary | undefined)[]): LatencySummary | undefined {
  let worst: LatencySummary | undefined;
  for (const delay of delays) {
    if (delay === undefined) continue;
    worst =
      worst === undefined
        ? delay
        : {
            p50Ms: Math.max(worst.p50Ms, delay.p50Ms),
            p99Ms: Math.max(worst.p99Ms, delay.p99Ms),
            maxMs: Math.max(worst.maxMs, delay.maxMs),
          };
  }
  return worst;
}

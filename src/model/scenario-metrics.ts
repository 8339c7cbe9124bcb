/**
 * The crash experiment's figures, computed from the two programs' timelines. Pure: the
 * scenario runner and the simulator feed it the same shapes. Times are ms from the start
 * of the run; rates are per second.
 */
export interface ServerSample {
  readonly atMs: number;
  readonly concurrency: number;
  /** Infinity where the delay outgrew every number. */
  readonly lastDelayMs: number;
  /**
   * The most in service since the previous sample, and its delay: a burst that drains
   * between two reports (stale requests on resume) still counts.
   */
  readonly peakConcurrency: number;
  readonly peakDelayMs: number;
  /** Totals since the start, when the source reports them: completed after the client had gone; */
  readonly abandoned?: number | undefined;
  /** in service now for a client that has gone; */
  readonly abandonedInService?: number | undefined;
  /** taken out of service when the client went away (-cancel-on-disconnect); */
  readonly cancelled?: number | undefined;
  /** taken out of service, or refused, at an expired deadline (-deadline-aware). */
  readonly expired?: number | undefined;
}

/**
 * Work the server did for nobody: requests it kept working on after their client had given
 * up, either to completion (the answer goes nowhere) or still at the end of the run. These
 * are the stale requests that keep a server down. Not counted as waste: requests the server
 * dropped as soon as nobody waited (cancelled on disconnect, expired at their deadline), the
 * work -cancel-on-disconnect and -deadline-aware save; they are shown beside it.
 */
export interface WastedWork {
  readonly completedForNobody: number;
  readonly heldForNobody: number;
  /** completedForNobody + heldForNobody. */
  readonly total: number;
  /** Cancelled or expired: cut short once nobody waited. */
  readonly droppedForNobody: number;
}

export interface ClientWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly okPerSec: number;
  readonly errorsPerSec: number;
  readonly timedoutPerSec: number;
  readonly attemptsPerSec: number;
}

export interface Phases {
  /** When the server was stopped (SIGSTOP). */
  readonly stopAtMs: number;
  /** When it was resumed (SIGCONT). */
  readonly resumeAtMs: number;
  /** End of the observation. */
  readonly endMs: number;
}

export interface ScenarioMetrics {
  /** Mean OK rate of the steady-state windows before the outage (the first, warm-up window left out). */
  readonly baselineOkPerSec: number;
  /** Mean attempts per second during the outage ÷ baseline. */
  readonly outageAmplification: number;
  /** The worst window of the outage, ÷ baseline. */
  readonly peakAmplification: number;
  readonly peakConcurrencyAfterResume: number;
  readonly peakDelayAfterResumeMs: number;
  /** From resume until concurrency stays at or below the limit; undefined if it never did. */
  readonly serverRecoveryMs: number | undefined;
  /** From resume to the end of the first of two good windows in a row; undefined if none. */
  readonly clientRecoveryMs: number | undefined;
  readonly verdict: "recovered" | "collapsed";
  /** Over the run, from the last server sample's totals; undefined when the samples carry none. */
  readonly wastedWork: WastedWork | undefined;
}

/** A window is good when OK is back to this share of the baseline… */
export const GOOD_OK_SHARE = 0.9;
/** …and errors plus timeouts are at most this share of it. */
export const GOOD_FAILURE_SHARE = 0.05;
/** Good windows in a row that mark the client's recovery. */
export const GOOD_WINDOWS_IN_A_ROW = 2;

export function computeMetrics(
  server: readonly ServerSample[],
  client: readonly ClientWindow[],
  phases: Phases,
  concurrencyLimit: number,
): ScenarioMetrics {
  const steady = client.filter((window) => window.endMs <= phases.stopAtMs).slice(1);
  const baselineOkPerSec = mean(steady.map((window) => window.okPerSec));
  const outage = client.filter((window) => window.startMs >= phases.stopAtMs && window.endMs <= phases.resumeAtMs);
  const outageAttempts = outage.map((window) => window.attemptsPerSec);
  const ratio = (value: number) => (baselineOkPerSec > 0 ? value / baselineOkPerSec : 0);

  const afterResume = server.filter((sample) => sample.atMs >= phases.resumeAtMs && sample.atMs <= phases.endMs);
  const serverRecoveryMs = recoveryOfServer(afterResume, phases.resumeAtMs, concurrencyLimit);
  const clientRecoveryMs = recoveryOfClient(client, phases, baselineOkPerSec);
  return {
    baselineOkPerSec,
    outageAmplification: ratio(mean(outageAttempts)),
    peakAmplification: ratio(Math.max(0, ...outageAttempts)),
    peakConcurrencyAfterResume: afterResume.reduce((peak, sample) => Math.max(peak, sample.peakConcurrency), 0),
    peakDelayAfterResumeMs: afterResume.reduce((peak, sample) => Math.max(peak, sample.peakDelayMs), 0),
    serverRecoveryMs,
    clientRecoveryMs,
    verdict: serverRecoveryMs !== undefined && clientRecoveryMs !== undefined ? "recovered" : "collapsed",
    wastedWork: wastedWork(server.at(-1)),
  };
}

function wastedWork(last: ServerSample | undefined): WastedWork | undefined {
  if (last?.abandoned === undefined) return undefined;
  const held = last.abandonedInService ?? 0;
  return {
    completedForNobody: last.abandoned,
    heldForNobody: held,
    total: last.abandoned + held,
    droppedForNobody: (last.cancelled ?? 0) + (last.expired ?? 0),
  };
}

/**
 * The first report from which concurrency stays at or below the limit, at report
 * resolution: a report whose interval peaked above the limit but ends below it is the
 * moment of recovery (the drop happened within that interval).
 */
function recoveryOfServer(afterResume: readonly ServerSample[], resumeAtMs: number, limit: number): number | undefined {
  let recoveredFrom: number | undefined;
  for (let index = afterResume.length - 1; index >= 0; index--) {
    const sample = afterResume[index]!;
    if (sample.concurrency > limit) break;
    recoveredFrom = index;
    if (sample.peakConcurrency > limit) break;
  }
  return recoveredFrom === undefined ? undefined : afterResume[recoveredFrom]!.atMs - resumeAtMs;
}

function recoveryOfClient(client: readonly ClientWindow[], phases: Phases, baseline: number): number | undefined {
  if (baseline <= 0) return undefined;
  const candidates = client.filter((window) => window.startMs >= phases.resumeAtMs && window.endMs <= phases.endMs);
  let inARow = 0;
  for (let index = 0; index < candidates.length; index++) {
    const window = candidates[index]!;
    const good =
      window.okPerSec >= GOOD_OK_SHARE * baseline && window.errorsPerSec + window.timedoutPerSec <= GOOD_FAILURE_SHARE * baseline;
    inARow = good ? inARow + 1 : 0;
    if (inARow === GOOD_WINDOWS_IN_A_ROW) return candidates[index - GOOD_WINDOWS_IN_A_ROW + 1]!.endMs - phases.resumeAtMs;
  }
  return undefined;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

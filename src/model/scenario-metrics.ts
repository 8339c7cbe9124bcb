import type { ClientWindow, Phases, ServerSample } from "./timeline.ts";
import { judge, type OutOfMemory, reportsAfterResume, type Verdict, type WatchedService } from "./verdict.ts";

/**
 * The crash experiment's figures, computed from the two programs' timelines
 * (src/model/timeline.ts). Pure: the real run and the simulator feed it the same shapes.
 */
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

export interface ScenarioMetrics {
  /** Mean OK rate of the steady-state windows before the outage (the first, warm-up window left out). */
  readonly baselineOkPerSec: number;
  /** Mean attempts per second during the outage ÷ baseline. */
  readonly outageAmplification: number;
  /** The worst window of the outage, ÷ baseline. */
  readonly peakAmplification: number;
  readonly peakConcurrencyAfterResume: number;
  readonly peakDelayAfterResumeMs: number;
  /** "server back" (src/model/verdict.ts): from resume until concurrency stays at or below the limit; undefined if it never did. */
  readonly serverRecoveryMs: number | undefined;
  /** "clients back" (src/model/verdict.ts): from resume to the end of the first of two good windows in a row; undefined if none. */
  readonly clientRecoveryMs: number | undefined;
  readonly verdict: Verdict;
  /** One line saying why the verdict is what it is. */
  readonly why: string;
  /** Goodput: mean OK rate of the client windows from the resume to the end of the observation. */
  readonly goodputAfterResumeOkPerSec: number;
  /**
   * Retry amplification: attempts sent ÷ first attempts sent, from the start of the outage
   * to the end (1 when nothing was retried); undefined without retry counts or first attempts.
   */
  readonly retryAmplification: number | undefined;
  /** Over the run, from the last server sample's totals; undefined when the samples carry none. */
  readonly wastedWork: WastedWork | undefined;
}

/** What else happened to the server, besides its reports. */
export interface ServerEvents {
  readonly outOfMemory?: OutOfMemory | undefined;
  /** A service of the user's (demo -target): its watcher's answers, and why it was not settled when the run began. */
  readonly watched?: WatchedService | undefined;
  readonly unsettled?: string | undefined;
  /** A prediction beside a watched service: the reports read as its watcher reads it (VerdictInput.readAsWatcher). */
  readonly readAsWatcher?: boolean | undefined;
}

export function computeMetrics(
  server: readonly ServerSample[],
  client: readonly ClientWindow[],
  phases: Phases,
  concurrencyLimit: number,
  events: ServerEvents = {},
): ScenarioMetrics {
  const steady = client.filter((window) => window.endMs <= phases.stopAtMs).slice(1);
  const baselineOkPerSec = mean(steady.map((window) => window.okPerSec));
  const outage = client.filter((window) => window.startMs >= phases.stopAtMs && window.endMs <= phases.resumeAtMs);
  const outageAttempts = outage.map((window) => window.attemptsPerSec);
  const ratio = (value: number) => (baselineOkPerSec > 0 ? value / baselineOkPerSec : 0);

  const afterResume = reportsAfterResume(server, phases);
  const judgement = judge({ server, client, phases, concurrencyLimit, baselineOkPerSec, ...events });
  const observed = client.filter((window) => window.startMs >= phases.resumeAtMs && window.endMs <= phases.endMs);
  return {
    baselineOkPerSec,
    outageAmplification: ratio(mean(outageAttempts)),
    peakAmplification: ratio(Math.max(0, ...outageAttempts)),
    peakConcurrencyAfterResume: afterResume.reduce((peak, sample) => Math.max(peak, sample.peakConcurrency), 0),
    peakDelayAfterResumeMs: afterResume.reduce((peak, sample) => Math.max(peak, sample.peakDelayMs), 0),
    serverRecoveryMs: judgement.serverBackMs,
    clientRecoveryMs: judgement.clientsBackMs,
    verdict: judgement.verdict,
    why: judgement.why,
    goodputAfterResumeOkPerSec: mean(observed.map((window) => window.okPerSec)),
    retryAmplification: retryAmplification(client.filter((window) => window.startMs >= phases.stopAtMs && window.endMs <= phases.endMs)),
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

/** Attempts ÷ first attempts over some windows, weighting each by its length. */
function retryAmplification(windows: readonly ClientWindow[]): number | undefined {
  let attempts = 0;
  let firstAttempts = 0;
  for (const window of windows) {
    if (window.retriesPerSec === undefined) return undefined;
    const seconds = (window.endMs - window.startMs) / 1000;
    attempts += window.attemptsPerSec * seconds;
    firstAttempts += (window.attemptsPerSec - window.retriesPerSec) * seconds;
  }
  return firstAttempts > 0 ? attempts / firstAttempts : undefined;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

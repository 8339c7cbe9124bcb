/**
 * The timelines of one crash experiment, as the real programs' reports and the simulator
 * give them: what the verdict and the metrics read. Times are ms from the start of the run;
 * rates are per second.
 */
import type { Fault } from "./faults/fault-schedule.ts";

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
  /** The queue model's state, where the source reports it: requests waiting for a thread, threads busy, threads in all. */
  readonly queueLength?: number | undefined;
  readonly threadsBusy?: number | undefined;
  readonly threads?: number | undefined;
}

export interface ClientWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly okPerSec: number;
  readonly errorsPerSec: number;
  readonly timedoutPerSec: number;
  readonly attemptsPerSec: number;
  /** Retries among the attempts (absent from timelines recorded before it was reported). */
  readonly retriesPerSec?: number | undefined;
  /** Why the client fell behind in this window (src/model/client-behind.ts); undefined when it kept up, or in the simulator. */
  readonly behind?: string | undefined;
}

export interface Phases {
  /** When the trouble began: the server was stopped (SIGSTOP), or the first fault started. */
  readonly stopAtMs: number;
  /** When it ended: the server was resumed (SIGCONT), or the last fault ended. */
  readonly resumeAtMs: number;
  /** End of the observation. */
  readonly endMs: number;
  /**
   * Every fault of the run, times from the run's start (src/model/faults); absent for a run
   * whose only trouble is the one stop from stopAtMs to resumeAtMs.
   */
  readonly faults?: readonly Fault[] | undefined;
  /**
   * Where the run's own clock starts on this timeline, when not at 0: the demo's timeline counts
   * from when its server started, its schedule from when its clients did. A reason names the
   * faults on the schedule's clock, as the user wrote them.
   */
  readonly runStartMs?: number | undefined;
}

import { seconds } from "../model/seconds.ts";
import type { ClientWindow, Phases, ServerSample } from "../model/timeline.ts";
import { type Fault, type FaultKind, faultName } from "../model/faults/fault-schedule.ts";
import { faultKind } from "../model/faults/kinds.ts";

/**
 * What the dashboard page is told, one JSON object per Server-Sent Event. Times are
 * seconds from the start of the strategy's run, so that runs overlay on shared axes.
 */
export type DashboardEvent =
  /** Sent first on every connection: the page starts over, then gets the history so far. */
  | { readonly kind: "hello"; readonly title: string; readonly source: string }
  /** A strategy's run begins; `run` numbers them from 0. */
  | { readonly kind: "run"; readonly run: number; readonly strategy: string; readonly limit: number }
  | { readonly kind: "phase"; readonly run: number; readonly phase: PhaseName; readonly atS: number }
  /**
   * A fault of the run's schedule, sent when it begins: a band from `fromS` to `toS` named `label`
   * (e.g. "capacity ×0.5"), in its kind's colour; `silencesServer`: the server reports nothing meanwhile.
   */
  | {
      readonly kind: "fault";
      readonly run: number;
      readonly fault: FaultKind;
      readonly fromS: number;
      readonly toS: number;
      readonly label: string;
      readonly fill: string;
      readonly silencesServer: boolean;
    }
  /**
   * The server's report: requests in service and the modelled delay (null when infinite);
   * with the queue model, its queue and threads.
   */
  | {
      readonly kind: "server";
      readonly run: number;
      readonly atS: number;
      readonly concurrency: number;
      readonly delayS: number | null;
      readonly queueLength?: number;
      readonly threadsBusy?: number;
      readonly threads?: number;
    }
  /** The client's window, at its end. `throttledPerSec` only where the client reports it. */
  | {
      readonly kind: "client";
      readonly run: number;
      readonly atS: number;
      readonly okPerSec: number;
      readonly errorsPerSec: number;
      readonly timedoutPerSec: number;
      readonly attemptsPerSec: number;
      readonly throttledPerSec?: number;
      /** Why the client fell behind in this window: its figures are its own lag, not the server's. */
      readonly behind?: string;
    }
  /** A chain of tiers only: the attempts per second that reached one tier (docs/tiers.md). */
  | {
      readonly kind: "tier";
      readonly run: number;
      readonly tier: string;
      /** Its place in the chain, the edge 0. */
      readonly index: number;
      readonly atS: number;
      readonly arrivalsPerSec: number;
    }
  /** A spike's extra users' window (their own client), at its end: their attempts and OK answers per second. */
  | {
      readonly kind: "spike-client";
      readonly run: number;
      readonly atS: number;
      readonly okPerSec: number;
      readonly attemptsPerSec: number;
    }
  | { readonly kind: "verdict"; readonly run: number; readonly verdict: string; readonly why: string }
  /** Nothing more will come: the page stops reconnecting. */
  | { readonly kind: "end"; readonly note: string };

export type PhaseName = "steady" | "outage" | "observe";

export function serverEvent(run: number, sample: ServerSample): DashboardEvent {
  const delayS = Number.isFinite(sample.lastDelayMs) ? seconds(sample.lastDelayMs) : null;
  const queue =
    sample.threads === undefined
      ? {}
      : { queueLength: sample.queueLength ?? 0, threadsBusy: sample.threadsBusy ?? 0, threads: sample.threads };
  return { kind: "server", run, atS: seconds(sample.atMs), concurrency: sample.concurrency, delayS, ...queue };
}

/** A fault as the dashboard marks it: its kind, its band and a label with its factor. */
export function faultEvent(run: number, fault: Fault): DashboardEvent {
  const { mechanism, fill } = faultKind(fault.kind);
  // A paused or restarting server reports nothing: the page breaks its lines there.
  const silencesServer = mechanism === "pause" || mechanism === "restart";
  const [fromS, toS] = [seconds(fault.atMs), seconds(fault.atMs + fault.durationMs)];
  return { kind: "fault", run, fault: fault.kind, fromS, toS, label: faultName(fault), fill, silencesServer };
}

/** A window as the client reports it; a client that counts throttled retries adds their rate. */
export function clientEvent(run: number, window: ClientWindow & { readonly throttledPerSec?: number | undefined }): DashboardEvent {
  return {
    kind: "client",
    run,
    atS: seconds(window.endMs),
    okPerSec: window.okPerSec,
    errorsPerSec: window.errorsPerSec,
    timedoutPerSec: window.timedoutPerSec,
    attemptsPerSec: window.attemptsPerSec,
    ...(typeof window.throttledPerSec === "number" ? { throttledPerSec: window.throttledPerSec } : {}),
    ...(window.behind === undefined ? {} : { behind: window.behind }),
  };
}

/**
 * The phases of a run with outages at the given times: steady from `steadyFromMs`, then
 * for each outage, outage and observe.
 */
export function phaseEvents(
  run: number,
  steadyFromMs: number,
  outages: readonly { readonly atMs: number; readonly durationMs: number }[],
): DashboardEvent[] {
  const events: DashboardEvent[] = [{ kind: "phase", run, phase: "steady", atS: seconds(steadyFromMs) }];
  for (const outage of outages) {
    events.push({ kind: "phase", run, phase: "outage", atS: seconds(outage.atMs) });
    events.push({ kind: "phase", run, phase: "observe", atS: seconds(outage.atMs + outage.durationMs) });
  }
  return events;
}

/** The one outage of the demo's phases, in the form phaseEvents takes. */
export const outageOf = (phases: Phases) => [{ atMs: phases.stopAtMs, durationMs: phases.resumeAtMs - phases.stopAtMs }];

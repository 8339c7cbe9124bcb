/**
 * The figures of one tier of a chain over a run (docs/tiers.md), from what was counted at
 * its door window by window: amplification, load relative to normal, goodput, work for
 * nobody, and when it collapsed. Pure: the simulator and a real chain's report compute them alike.
 */

/** A tier's counters at the end of one window, cumulative since the start of the run. */
export interface TierSample {
  readonly endMs: number;
  readonly arrivals: number;
  readonly okAnswers: number;
  /** The users' requests (first attempts) so far, at the edge. */
  readonly userRequests: number;
}

/** Below this share of its normal goodput a tier has collapsed; at this share again it is back. */
export const COLLAPSE_SHARE = 0.5;
export const RECOVERY_SHARE = 0.9;

export interface TierFigures {
  readonly name: string;
  /** Attempts that arrived at the tier over the run. */
  readonly arrivals: number;
  /** Arrivals ÷ the users' requests over the run (measured). */
  readonly amplification: number;
  /**
   * Arrivals ÷ the users' requests over the windows of the trouble (from the first fault's
   * start to the last one's end): the multiplication while something fails; null without faults.
   */
  readonly faultAmplification: number | null;
  /** The same from the policies with no budget and everything failing below (policyAmplification); null for no limit. */
  readonly policyAmplification: number | null;
  /** Arrivals per second before the first fault; null when no window ended before it. */
  readonly normalArrivalsPerSec: number | null;
  /** The most arrivals per second of any window. */
  readonly peakArrivalsPerSec: number;
  /** Peak ÷ normal arrivals per second; null without a normal. */
  readonly peakLoad: number | null;
  /** OK answers to a waiting caller per second, over the run. */
  readonly goodputPerSec: number;
  /** Answers completed after the caller had given up (the model's abandoned). */
  readonly workForNobody: number;
  /**
   * The end of the first window after the normal phase whose goodput fell below COLLAPSE_SHARE of normal while it also
   * answered OK less than COLLAPSE_SHARE of its normal share of what arrived (a tier nobody calls has not collapsed); null if none.
   */
  readonly collapsedAtMs: number | null;
  /** The end of the first later window whose goodput is back at RECOVERY_SHARE of normal; null if none. */
  readonly recoveredAtMs: number | null;
  /** held: never collapsed; recovered: collapsed and came back; collapsed: still down at the end. */
  readonly verdict: TierVerdict;
}

export type TierVerdict = "held" | "recovered" | "collapsed";

export interface TierCounts {
  readonly name: string;
  readonly samples: readonly TierSample[];
  readonly workForNobody: number;
  readonly policyAmplification: number;
}

const rate = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : 0);

/** One window of a tier: when it ended, what arrived and what was answered OK to a waiting caller, per second. */
export interface TierWindow {
  readonly endMs: number;
  readonly arrivalsPerSec: number;
  readonly okPerSec: number;
}

/** A tier's samples (cumulative counts) as rates per window, the first from 0. */
export function tierWindows(samples: readonly TierSample[]): TierWindow[] {
  return samples.map((sample, index) => {
    const previous = index === 0 ? undefined : samples[index - 1]!;
    const ms = sample.endMs - (previous?.endMs ?? 0);
    return {
      endMs: sample.endMs,
      arrivalsPerSec: rate(sample.arrivals - (previous?.arrivals ?? 0), ms),
      okPerSec: rate(sample.okAnswers - (previous?.okAnswers ?? 0), ms),
    };
  });
}

/**
 * A tier's figures; `userRequests` over the run, `normalUntilMs` the start of the first fault
 * (the run's end when none), `troubleUntilMs` the end of the last. Windows that end after
 * `judgedUntilMs` (a real chain's tiers finishing their calls once the users stopped) count in the
 * totals but not in the peak or the verdict: a tier that nobody calls any more has not collapsed.
 */
export function tierFigures(
  counts: TierCounts,
  userRequests: number,
  normalUntilMs: number,
  troubleUntilMs: number,
  judgedUntilMs = Infinity,
): TierFigures {
  const samples = counts.samples;
  const last = samples.at(-1) ?? { endMs: 0, arrivals: 0, okAnswers: 0, userRequests: 0 };
  const windows = tierWindows(samples).filter((window) => window.endMs <= judgedUntilMs);
  const normal = samples.filter((sample) => sample.endMs <= normalUntilMs).at(-1);
  const normalArrivalsPerSec = normal === undefined ? null : rate(normal.arrivals, normal.endMs);
  const normalOkPerSec = normal === undefined ? null : rate(normal.okAnswers, normal.endMs);
  const peakArrivalsPerSec = Math.max(0, ...windows.map((window) => window.arrivalsPerSec));
  let collapsedAtMs: number | null = null;
  let recoveredAtMs: number | null = null;
  if (normalOkPerSec !== null && normalOkPerSec > 0) {
    // The share of its arrivals answered OK in the normal phase (1 for a tier that fails nothing).
    const normalShare = normalOkPerSec / normalArrivalsPerSec!;
    for (const [index, window] of windows.entries()) {
      if (window.endMs <= normalUntilMs) continue;
      // A tier its callers stopped calling (its caller stopped, crashed, or held up) answers less for
      // lack of work, not from failing: it collapses only if it also fails what does arrive. Answers
      // lag their arrivals, so what arrived is the lesser of this window's and the one before (a
      // burst at a window's end is answered in the next).
      const arrivedPerSec = Math.min(window.arrivalsPerSec, windows[index - 1]?.arrivalsPerSec ?? window.arrivalsPerSec);
      const failing = window.okPerSec < COLLAPSE_SHARE * normalOkPerSec && window.okPerSec < COLLAPSE_SHARE * normalShare * arrivedPerSec;
      if (collapsedAtMs === null && failing) collapsedAtMs = window.endMs;
      else if (collapsedAtMs !== null && recoveredAtMs === null && window.okPerSec >= RECOVERY_SHARE * normalOkPerSec) {
        recoveredAtMs = window.endMs;
      }
    }
  }
  return {
    name: counts.name,
    arrivals: last.arrivals,
    amplification: userRequests > 0 ? last.arrivals / userRequests : 0,
    faultAmplification: amplificationBetween(samples, normal, troubleUntilMs),
    policyAmplification: Number.isFinite(counts.policyAmplification) ? counts.policyAmplification : null,
    normalArrivalsPerSec,
    peakArrivalsPerSec,
    peakLoad: normalArrivalsPerSec === null || normalArrivalsPerSec === 0 ? null : peakArrivalsPerSec / normalArrivalsPerSec,
    goodputPerSec: rate(last.okAnswers, last.endMs),
    workForNobody: counts.workForNobody,
    collapsedAtMs,
    recoveredAtMs,
    verdict: collapsedAtMs === null ? "held" : recoveredAtMs === null ? "collapsed" : "recovered",
  };
}

/**
 * The tier that collapsed first: the earliest collapse; at the same window the deepest tier,
 * where the trouble came from (a tier fails its callers when its upstream fails). Undefined when none did.
 * `windowMs`: in a real chain each tier's windows end at its caller's own instants, so collapses
 * less than a window apart fell in overlapping windows and count as the same (0: the simulator's
 * windows, the same for every tier).
 */
export function firstCollapsed(tiers: readonly TierFigures[], windowMs = 0): TierFigures | undefined {
  const collapsed = tiers.filter((tier) => tier.collapsedAtMs !== null);
  if (collapsed.length === 0) return undefined;
  const earliestMs = Math.min(...collapsed.map((tier) => tier.collapsedAtMs!));
  return collapsed.filter((tier) => tier.collapsedAtMs === earliestMs || tier.collapsedAtMs! - earliestMs < windowMs).at(-1);
}

/** Arrivals ÷ users' requests from the sample `from` (the last normal one) to the last sample at or before `untilMs`. */
function amplificationBetween(samples: readonly TierSample[], from: TierSample | undefined, untilMs: number): number | null {
  const start = from ?? { endMs: 0, arrivals: 0, okAnswers: 0, userRequests: 0 };
  const end = samples.filter((sample) => sample.endMs <= untilMs && sample.endMs > start.endMs).at(-1);
  if (end === undefined) return null;
  const requests = end.userRequests - start.userRequests;
  return requests > 0 ? (end.arrivals - start.arrivals) / requests : null;
}

import { formatDuration } from "../../cli/duration.ts";
import type { OutputStream } from "../../runtime/program-io.ts";
import type { StepMeasure } from "../fit/step-measure.ts";
import type { Fate } from "../../runtime/one-request.ts";
import { startOverload } from "./phase.ts";
import {
  BACK_IN_A_ROW,
  type Baseline,
  baselineBoundMs,
  type Recovery,
  type RequestAllowance,
  timeToBaseline,
} from "../../runtime/back-to-baseline.ts";
import { type OverloadSummary, summarizeOverload } from "./summary.ts";
import { type AbandonedWork, measureWorkForNobody, WORK_FOR_NOBODY_SHARE } from "./work-for-nobody.ts";

/** The overload phase's bounds (its flags) and the probe's own limits it stays within. */
export interface OverloadLimits {
  /** Arrivals at this multiple of the measured capacity. */
  readonly factor: number;
  readonly durationMs: number;
  readonly maxRequests: number;
  /** The longest wait for the service to come back after the overload, and after the abandoned burst. */
  readonly settleMs: number;
  readonly maxRatePerSec: number;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
}

/** What the probe measured past saturation. */
export interface OverloadFindings {
  readonly capacityPerSec: number;
  readonly baseline: Baseline;
  readonly ratePerSec: number;
  readonly summary: OverloadSummary;
  readonly recovery: Recovery;
  /** Undefined when the service was not back at its baseline after the overload: nothing to measure it from. */
  readonly abandoned: AbandonedWork | undefined;
  /** Back at baseline after the abandoned burst; undefined when it was not within -overload-settle. */
  readonly settledAfterMs: number | undefined;
}

/**
 * The probe's phase past saturation (docs/probe.md, "Past saturation"): open-loop arrivals at
 * `factor` times the measured capacity, then light load until the service is back at its baseline;
 * then a burst its clients abandon and a canary behind it; then light load again, so the service is
 * left as it was found. Each part prints its line as it ends. Undefined when `stop` cut it: a
 * request given up then is no fate of the service's.
 */
export async function probeOverload(
  url: URL,
  steps: readonly StepMeasure[],
  limits: OverloadLimits,
  stdout: OutputStream,
  stop: AbortSignal,
  now: () => number = () => performance.now(),
): Promise<OverloadFindings | undefined> {
  const capacityPerSec = Math.max(...steps.map((step) => step.throughputPerSec));
  const lowest = steps.reduce((low, step) => (step.concurrency < low.concurrency ? step : low));
  const baseline: Baseline = { p50Ms: lowest.p50Ms, p99Ms: lowest.p99Ms };
  const ratePerSec = Math.min(limits.factor * capacityPerSec, limits.maxRatePerSec);
  const allowance: RequestAllowance = { left: limits.maxRequests };
  const requests = Math.max(1, Math.min(allowance.left, Math.round((ratePerSec * limits.durationMs) / 1000)));
  allowance.left -= requests;
  const exchange = { timeoutMs: limits.timeoutMs, maxBodyBytes: limits.maxBodyBytes };
  stdout.write(
    `overload: ${requests} requests at ${ratePerSec.toFixed(1)} req/s (${(ratePerSec / capacityPerSec).toFixed(2)} × the measured ` +
      `${capacityPerSec.toFixed(1)} req/s), each on a new connection, timeout ${formatDuration(limits.timeoutMs)}\n`,
  );
  const run = startOverload(url, { ...exchange, ratePerSec, requests }, now, stop);
  const settle = { ...exchange, maxWaitMs: limits.settleMs };
  const recovery = await timeToBaseline(url, baseline, await run.lastSent, settle, allowance, now, stop);
  const summary = summarizeOverload(await run.finished);
  // Stopped (Ctrl-C): the requests given up then are the probe's doing, not fates of the service's.
  if (stop.aborted) return interrupted(stdout);
  for (const line of overloadLines(summary, recovery, baseline, limits.settleMs)) stdout.write(`${line}\n`);
  // The burst and its canary, and at least one request after them.
  const burst = Math.min(allowance.left - 2, Math.max(MIN_BURST, Math.ceil(capacityPerSec)));
  const unmeasured =
    recovery.backAfterMs === undefined
      ? "the service was not back at its baseline to measure from"
      : burst < MIN_BURST
        ? "-max-requests or -overload-max-requests spent"
        : undefined;
  if (unmeasured !== undefined) {
    stdout.write(`work for nobody: not measured: ${unmeasured}\n`);
    return { capacityPerSec, baseline, ratePerSec, summary, recovery, abandoned: undefined, settledAfterMs: undefined };
  }
  allowance.left -= burst + 1;
  const abandoned = await measureWorkForNobody(
    url,
    { ...exchange, burst, capacityPerSec, maxCanaryMs: limits.settleMs },
    baseline,
    now,
    stop,
  );
  if (stop.aborted) return interrupted(stdout);
  stdout.write(`${abandonedLine(abandoned)}\n`);
  const settled = await timeToBaseline(url, baseline, now(), settle, allowance, now, stop);
  if (stop.aborted) return interrupted(stdout);
  if (settled.backAfterMs === undefined)
    stdout.write(`work for nobody: the service was not back at baseline ${formatDuration(limits.settleMs)} after the burst\n`);
  return { capacityPerSec, baseline, ratePerSec, summary, recovery, abandoned, settledAfterMs: settled.backAfterMs };
}

function interrupted(stdout: OutputStream): undefined {
  stdout.write("overload: interrupted: nothing past saturation is kept\n");
  return undefined;
}

/** The abandoned burst: a second of work at capacity, and never so few that the canary cannot tell. */
const MIN_BURST = 20;

const FATE_WORDS: Readonly<Record<Fate, string>> = {
  served: "served",
  shed: "shed (503/429)",
  error: "other errors",
  timeout: "held past the timeout",
  "connect-timeout": "connect timeout",
  refused: "refused",
  reset: "reset",
  "probe-limit": "the probe's own limit (ports, descriptors)",
};

const NOT_BACK_WORDS: Readonly<Record<NonNullable<Recovery["notBackBy"]>, (settleMs: number) => string>> = {
  wait: (settleMs) => `${formatDuration(settleMs)} after the last arrival (-overload-settle)`,
  requests: () => "when the phase's requests ran out (-max-requests, -overload-max-requests)",
  stopped: () => "when the probe was stopped",
};

/** A lag in the probe's sends past both of these is said: the arrivals were not the even stream planned. */
const MAX_LAG_MS = 50;
const MAX_LAG_SHARE = 0.05;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function overloadLines(summary: OverloadSummary, recovery: Recovery, baseline: Baseline, settleMs: number): string[] {
  const share = (count: number) => `${((100 * count) / Math.max(1, summary.requests)).toFixed(1)} %`;
  const fates = (Object.entries(summary.counts) as [Fate, number][])
    .filter(([fate, count]) => count > 0 || fate !== "probe-limit")
    .map(([fate, count]) => `${FATE_WORDS[fate]} ${count} (${share(count)})`);
  const served = Number.isNaN(summary.servedP50Ms) ? "" : `; served p50 ${seconds(summary.servedP50Ms)}`;
  const lines = [`overload fates: ${fates.join(", ")}${served}`];
  lines.push(
    summary.excess === undefined
      ? `overload held: up to ${summary.heldAtMost} requests at once, and turned none away (it holds at least that many)`
      : `overload held: ${summary.heldAtExcess} requests at once when it began to turn work away (up to ${summary.heldAtMost} connected); the excess was mostly ${FATE_WORDS[summary.excess]}`,
  );
  if (summary.maxLagMs > Math.max(MAX_LAG_MS, MAX_LAG_SHARE * summary.durationMs))
    lines.push(
      `overload: the probe sent up to ${formatDuration(Math.round(summary.maxLagMs))} behind its schedule (its own machine, not the service): its arrivals came in bunches`,
    );
  const bound = `${BACK_IN_A_ROW} answers in a row within ${formatDuration(Math.round(baselineBoundMs(baseline)))}`;
  lines.push(
    recovery.backAfterMs === undefined
      ? `recovery: not back at baseline (${bound}) ${NOT_BACK_WORDS[recovery.notBackBy ?? "wait"](settleMs)}`
      : `recovery: back at baseline (${bound}) ${seconds(recovery.backAfterMs)} after the last arrival`,
  );
  return lines;
}

const UNTELLABLE_WORDS: Readonly<Record<NonNullable<AbandonedWork["untellable"]>, string>> = {
  few: "too few waited to tell",
  full: "cannot tell: its accept queue was full, so the next request's own connection waited too",
};

export function abandonedLine(abandoned: AbandonedWork): string {
  const unconnected = abandoned.neverConnected === 0 ? "" : ` (${abandoned.neverConnected} never connected)`;
  const head = `work for nobody: ${abandoned.sent} requests at once, given up after ${formatDuration(Math.round(abandoned.abandonAfterMs))} with ${abandoned.waiting} connected and unanswered${unconnected}`;
  if (abandoned.canaryWaitMs === undefined) return `${head}; the next request got no answer: cannot tell`;
  const waited = `; the next request waited ${seconds(abandoned.canaryWaitMs)} (${seconds(abandoned.waitIfServedMs)} if all were served)`;
  if (abandoned.servedShare === undefined) return `${head}${waited}: ${UNTELLABLE_WORDS[abandoned.untellable ?? "few"]}`;
  const verdict =
    abandoned.servedShare >= WORK_FOR_NOBODY_SHARE ? "it serves requests whose client has gone" : "it drops requests whose client has gone";
  return `${head}${waited}: ${verdict} (${(100 * abandoned.servedShare).toFixed(0)} % served)`;
}

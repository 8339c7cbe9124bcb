import { formatDuration } from "../cli/duration.ts";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { GOOD_OK_SHARE } from "../model/scenario-metrics.ts";
import { readableDelay } from "./readable-delay.ts";

const seconds = (ms: number) => formatDuration(Math.round(ms / 100) * 100);

/** A delay to three figures or so: 206ms, 2.6s, 1h2m3s, 1.65e+53 years. */
const roughDelay = (ms: number) =>
  ms < 1_000
    ? `${Math.round(ms)}ms`
    : ms < 60_000
      ? `${(ms / 1000).toFixed(1)}s`
      : readableDelay(Number.isFinite(ms) ? Math.round(ms / 1000) * 1000 : ms);

/**
 * Why a run recovered or collapsed, in a few sentences built from its metrics: the load
 * the outage piled up, what it did to the server on resume, and who came back when.
 * (A shared definition of the verdicts, with a one-line reason each, belongs in the pure
 * model; when it exists, this is the one place to switch to it.)
 */
export function explainVerdict(metrics: ScenarioMetrics, concurrencyLimit: number): string {
  const load =
    `During the outage the clients sent ${metrics.outageAmplification.toFixed(2)}x the normal load ` +
    `(worst window ${metrics.peakAmplification.toFixed(2)}x).`;
  const peak = metrics.peakConcurrencyAfterResume;
  const overLimit =
    peak > concurrencyLimit ? `, ${(peak / Math.max(concurrencyLimit, 1)).toFixed(0)}x the limit of ${concurrencyLimit},` : "";
  const resume = `After the resume up to ${peak.toLocaleString("en")} requests were in service${overLimit} and the modelled delay reached ${roughDelay(metrics.peakDelayAfterResumeMs)}.`;
  if (metrics.serverRecoveryMs === undefined) {
    return (
      `${load} ${resume} Requests kept timing out, and their retries kept the server above its limit ` +
      `to the end of the observation: the server never came back although the outage was over (a metastable failure).`
    );
  }
  const serverBack = `The server was back under its limit ${seconds(metrics.serverRecoveryMs)} after the resume`;
  if (metrics.clientRecoveryMs === undefined) {
    return (
      `${load} ${resume} ${serverBack}, but the clients' goodput did not return to ${GOOD_OK_SHARE * 100} % of its ` +
      `baseline with few failures before the observation ended.`
    );
  }
  return `${load} ${resume} ${serverBack}, and the clients ${seconds(metrics.clientRecoveryMs)} after it.`;
}

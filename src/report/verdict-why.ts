import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { readableDelay } from "./readable-delay.ts";

/** A delay to three figures or so: 206ms, 2.6s, 1h2m3s, 1.65e+53 years. */
const roughDelay = (ms: number) =>
  ms < 1_000
    ? `${Math.round(ms)}ms`
    : ms < 60_000
      ? `${(ms / 1000).toFixed(1)}s`
      : readableDelay(Number.isFinite(ms) ? Math.round(ms / 1000) * 1000 : ms);

/**
 * Why a run recovered or collapsed, as a paragraph: the verdict's one-line reason, as
 * src/model/verdict.ts gives it, then the figures behind it: the load the outage piled up
 * and what it did to the server on resume.
 */
export function explainVerdict(metrics: ScenarioMetrics): string {
  const reason = `${metrics.why.charAt(0).toUpperCase()}${metrics.why.slice(1)}.`;
  const load =
    `During the outage the clients sent ${metrics.outageAmplification.toFixed(2)}x the normal load ` +
    `(worst window ${metrics.peakAmplification.toFixed(2)}x)`;
  // The client's own figures after the outage began are not the server's: no figure of them is worth quoting.
  if (metrics.verdict === "invalid") return `${reason} Run the client with more worker threads (-workers auto) and run again.`;
  if (metrics.verdict === "too-short") return `${reason} ${load}.`;
  return (
    `${reason} ${load}; after the resume up to ${metrics.peakConcurrencyAfterResume.toLocaleString("en")} requests were in service ` +
    `and the modelled delay reached ${roughDelay(metrics.peakDelayAfterResumeMs)}.`
  );
}

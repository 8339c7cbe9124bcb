import type { TopLevelSpec } from "vega-lite";
import { escapeHtml } from "../report/html.ts";
import { renderSvg } from "../report/report.ts";
import { describeModelSpec } from "../model/servers/model-flags.ts";
import { closedLoopLatencyMs, closedLoopThroughputPerSec } from "./fit/closed-loop-curve.ts";
import type { FitResult } from "./fit/fit-models.ts";
import { heldOutErrors, MIN_STEPS_TO_HOLD_OUT } from "./fit/held-out.ts";
import type { StepMeasure } from "./fit/step-measure.ts";
import { formatStep } from "./probe-run.ts";

export interface ProbeReport {
  readonly url: string;
  readonly steps: readonly StepMeasure[];
  readonly fit: FitResult;
  readonly validation: readonly StepMeasure[] | undefined;
  /** The service's steps -validate measured again (a first measure beyond its tolerance), each the median of its measures. */
  readonly measuredAgain?: readonly StepMeasure[] | undefined;
}

/**
 * Throughput and latency against concurrency: the measured steps (and -validate's ./server, and
 * the service's steps it measured again) as points, the fitted model's curve as a line, drawn by the report's chart renderer.
 */
export function probeChartSpec(report: ProbeReport): TopLevelSpec {
  const highest = Math.max(...report.steps.map((step) => step.concurrency));
  const curve = Array.from({ length: highest }, (_, index) => index + 1).map((concurrency) => ({
    concurrency,
    throughput: closedLoopThroughputPerSec(report.fit.chosen.spec, concurrency, report.fit.chosen.overheadMs),
    latency: closedLoopLatencyMs(report.fit.chosen.spec, concurrency, report.fit.chosen.overheadMs),
    series: `model: ${report.fit.chosen.spec.kind}`,
  }));
  const points = [
    ...report.steps.map((step) => ({ ...pointOf(step), series: "measured" })),
    ...(report.measuredAgain ?? []).map((step) => ({ ...pointOf(step), series: "measured again, median (-validate)" })),
    ...(report.validation ?? []).map((step) => ({ ...pointOf(step), series: "./server with the model" })),
  ];
  const x = { field: "concurrency", type: "quantitative", title: "concurrency (users, each waiting for its answer)" } as const;
  const color = { field: "series", type: "nominal", title: "" } as const;
  const panel = (field: string, title: string) => ({
    width: 560,
    height: 200,
    layer: [
      { data: { values: curve }, mark: { type: "line" }, encoding: { x, y: { field, type: "quantitative", title }, color } },
      {
        data: { values: points },
        mark: { type: "point", filled: true },
        encoding: { x, y: { field, type: "quantitative", title }, color },
      },
    ],
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `probe of ${report.url}`, subtitle: describeModelSpec(report.fit.chosen.spec) },
    vconcat: [panel("throughput", "throughput, req/s"), panel("latency", "mean latency, ms")],
  } as TopLevelSpec;
}

function pointOf(step: StepMeasure) {
  return { concurrency: step.concurrency, throughput: step.throughputPerSec, latency: step.meanLatencyMs };
}

/** A self-contained page: the steps, each model's fit, and the chart. */
export async function probeReportHtml(report: ProbeReport): Promise<string> {
  const svg = await renderSvg(probeChartSpec(report));
  const heldOut = heldOutErrors(report.steps);
  const percent = (fraction: number | undefined) => (fraction === undefined ? "-" : `${(100 * fraction).toFixed(1)} %`);
  const fits = [...report.fit.fits, report.fit.usl]
    .map(
      (fit) =>
        `<tr><td>${escapeHtml(describeModelSpec(fit.spec))}</td><td>${percent(fit.latencyError)}</td>` +
        `<td>${percent(fit.throughputError)}</td><td>${percent(heldOut?.get(fit.spec.kind)?.error)}</td></tr>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(`probe of ${report.url}`)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em}table{border-collapse:collapse}td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left}svg{max-width:100%;height:auto}</style>
</head><body><h1>${escapeHtml(`probe of ${report.url}`)}</h1>
<h2>Steps</h2><pre>${escapeHtml(report.steps.map(formatStep).join("\n"))}</pre>
<h2>Fits</h2><table><thead><tr><th>model</th><th>latency error</th><th>throughput error</th><th>held-out error</th></tr></thead><tbody>
${fits}
</tbody></table>
<p>Held-out error: each step between the lowest and the highest left out in turn, predicted by the family fitted to the others (latency and throughput, root mean square; "-" under ${MIN_STEPS_TO_HOLD_OUT} steps).</p>
<p>Picked: <b>${escapeHtml(describeModelSpec(report.fit.chosen.spec))}</b></p>
<figure>${svg}</figure>
</body></html>
`;
}

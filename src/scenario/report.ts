import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { formatDuration } from "../cli/duration.ts";
import type { ClientWindow, Phases, ScenarioMetrics, ServerSample, WastedWork } from "../model/scenario-metrics.ts";
import { VERDICT_DEFINITIONS, VERDICTS } from "../model/verdict.ts";

export interface StrategyResult {
  readonly strategy: string;
  readonly phases: Phases;
  readonly server: readonly ServerSample[];
  readonly client: readonly ClientWindow[];
  readonly metrics: ScenarioMetrics;
  readonly concurrencyLimit: number;
}

const seconds = (ms: number) => ms / 1000;
const MS_PER_YEAR = 365.25 * 24 * 3600 * 1000;

/** Go notation up to a year; beyond, years in scientific notation (Go's hours grow to 60 digits). */
export function readableDelay(ms: number): string {
  if (!Number.isFinite(ms)) return "forever";
  return ms < MS_PER_YEAR ? formatDuration(ms) : `${(ms / MS_PER_YEAR).toPrecision(3)} years`;
}
const orDash = (ms: number | undefined) => (ms === undefined ? "never" : formatDuration(Math.round(ms)));

/** Requests worked on for nobody, and beside them those dropped as soon as nobody waited. */
function describeWaste(waste: WastedWork | undefined): string {
  if (waste === undefined) return "-";
  return waste.droppedForNobody === 0 ? String(waste.total) : `${waste.total} (${waste.droppedForNobody} dropped)`;
}

/** One row per strategy: what a reader compares first. */
export function comparisonTable(results: readonly StrategyResult[]): string {
  const header = [
    "strategy",
    "verdict",
    "baseline OK/s",
    "outage load",
    "peak concurrency",
    "peak delay",
    "server back",
    "clients back",
    "wasted work",
  ];
  const rows = results.map(({ strategy, metrics, phases }) => {
    // The run ended before the resume: no figure after it to show.
    const after = (text: string) => (phases.endMs >= phases.resumeAtMs && metrics.verdict !== "too-short" ? text : "-");
    return [
      strategy,
      metrics.verdict,
      metrics.baselineOkPerSec.toFixed(1),
      `${metrics.outageAmplification.toFixed(2)}x (peak ${metrics.peakAmplification.toFixed(2)}x)`,
      after(String(metrics.peakConcurrencyAfterResume)),
      after(readableDelay(metrics.peakDelayAfterResumeMs)),
      after(orDash(metrics.serverRecoveryMs)),
      after(orDash(metrics.clientRecoveryMs)),
      describeWaste(metrics.wastedWork),
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/**
 * The chart of one run, as Vega-Lite: server concurrency and delay per second (log
 * scales), client rates per window; the outage shaded and recovery marked.
 */
export function chartSpec(result: StrategyResult): TopLevelSpec {
  const { phases, metrics } = result;
  const outage = [{ start: seconds(phases.stopAtMs), end: seconds(phases.resumeAtMs) }];
  const marks = [
    { at: seconds(phases.resumeAtMs + (metrics.serverRecoveryMs ?? Number.NaN)), label: "server recovered" },
    { at: seconds(phases.resumeAtMs + (metrics.clientRecoveryMs ?? Number.NaN)), label: "clients recovered" },
  ].filter((mark) => Number.isFinite(mark.at));
  const domain = [0, seconds(phases.endMs)];
  const x = { field: "t", type: "quantitative", title: "seconds", scale: { domain, nice: false } } as const;
  const outageLayer = {
    data: { values: outage },
    mark: { type: "rect", color: "#d62728", opacity: 0.12 },
    encoding: { x: { field: "start", type: "quantitative", scale: { domain } }, x2: { field: "end" } },
  } as const;
  const recoveryLayer = {
    data: { values: marks },
    mark: { type: "rule", strokeDash: [4, 3], color: "#2ca02c" },
    encoding: { x: { field: "at", type: "quantitative", scale: { domain } }, tooltip: { field: "label" } },
  } as const;
  const serverValues = result.server.map((sample) => ({
    t: seconds(sample.atMs),
    concurrency: sample.concurrency,
    delay: Number.isFinite(sample.lastDelayMs) && sample.lastDelayMs > 0 ? seconds(sample.lastDelayMs) : null,
  }));
  const clientValues = result.client.flatMap((window) =>
    (
      [
        ["OK", window.okPerSec],
        ["errors", window.errorsPerSec],
        ["timedout", window.timedoutPerSec],
        ["attempts", window.attemptsPerSec],
      ] as const
    ).map(([series, rate]) => ({ t: seconds(window.endMs), series, rate })),
  );
  const panel = (title: string, layer: object) => ({ title, width: 640, height: 150, layer: [outageLayer, layer, recoveryLayer] });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `${result.strategy}: ${metrics.verdict}`, subtitle: "outage shaded; dashed lines mark recovery" },
    vconcat: [
      panel("server: requests in service (log)", {
        data: { values: serverValues },
        mark: { type: "line", interpolate: "step-after", color: "#1f77b4" },
        encoding: { x, y: { field: "concurrency", type: "quantitative", title: "concurrency", scale: { type: "symlog" } } },
      }),
      panel("server: last delay, seconds (log)", {
        data: { values: serverValues.filter((value) => value.delay !== null) },
        mark: { type: "line", interpolate: "step-after", color: "#9467bd" },
        encoding: { x, y: { field: "delay", type: "quantitative", title: "delay (s)", scale: { type: "log" } } },
      }),
      panel("client: per second, each window", {
        data: { values: clientValues },
        mark: { type: "line", point: true },
        encoding: {
          x,
          y: { field: "rate", type: "quantitative", title: "req/sec", scale: { type: "symlog" } },
          color: {
            field: "series",
            type: "nominal",
            scale: { domain: ["OK", "errors", "timedout", "attempts"], range: ["#2ca02c", "#d62728", "#ff7f0e", "#7f7f7f"] },
          },
        },
      }),
    ],
  } as TopLevelSpec;
}

/** Renders a Vega-Lite spec to SVG headlessly (no browser, no canvas). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[character]!);

/** A self-contained page (inline SVG, no scripts, no network) with the table, metrics and charts. */
export function reportHtml(title: string, results: readonly StrategyResult[], svgs: readonly string[], notes: readonly string[]): string {
  const sections = results
    .map(
      (result, index) =>
        `<section><h2>${escapeHtml(result.strategy)}: ${result.metrics.verdict}</h2><p>${escapeHtml(result.metrics.why)}</p>${svgs[index] ?? ""}</section>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
pre{background:#f6f6f6;padding:1em;overflow-x:auto}section{margin:2em 0}dt{font-weight:600}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<pre>${escapeHtml(comparisonTable(results))}</pre>
<dl>
<dt>baseline OK/s</dt><dd>mean OK rate of the steady-state windows before the outage (the first window left out)</dd>
<dt>outage load</dt><dd>client attempts per second during the outage ÷ baseline (mean, and the worst window)</dd>
<dt>peak concurrency, peak delay</dt><dd>largest requests in service and modelled delay after the server was resumed</dd>
<dt>server back</dt><dd>from SIGCONT until concurrency stays at or below the limit to the end</dd>
<dt>clients back</dt><dd>from SIGCONT to the end of the first of two windows in a row with OK ≥ 90 % of baseline and errors + timeouts ≤ 5 % of it</dd>
${VERDICTS.map((verdict) => `<dt>${verdict}</dt><dd>${escapeHtml(VERDICT_DEFINITIONS[verdict])}</dd>`).join("\n")}
</dl>
${notes.map((note) => `<p>${escapeHtml(note)}</p>`).join("\n")}
${sections}
</body></html>
`;
}

import { readFileSync } from "node:fs";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { chartScriptFile, uPlotFile } from "./chart-files.ts";
import type { ChainFigures } from "../model/tiers/chain-figures.ts";
import { TIER_HEADER, tierRows } from "./tier-table.ts";
import type { ScenarioMetrics, WastedWork } from "../model/scenario-metrics.ts";
import { bandsText, troubleBands } from "../model/faults/bands.ts";
import type { ClientWindow, Phases, ServerSample } from "../model/timeline.ts";
import { VERDICT_DEFINITIONS, VERDICTS } from "../model/verdict.ts";
import { seconds } from "../model/seconds.ts";
import { escapeHtml, scenarioSection } from "./html.ts";
import type { ScenarioSource } from "./html.ts";
import { readableDelay, timeOrNever } from "./readable-delay.ts";
import { textTable } from "./text-table.ts";
import { explainVerdict } from "./verdict-why.ts";

export { readableDelay };

export interface StrategyResult {
  readonly strategy: string;
  readonly phases: Phases;
  readonly server: readonly ServerSample[];
  readonly client: readonly ClientWindow[];
  readonly metrics: ScenarioMetrics;
  readonly concurrencyLimit: number;
  /** A chain of tiers only: each tier's figures (docs/tiers.md). */
  readonly chain?: ChainFigures | undefined;
}

/** Requests worked on for nobody, and beside them those dropped as soon as nobody waited. */
function describeWaste(waste: WastedWork | undefined): string {
  if (waste === undefined) return "-";
  return waste.droppedForNobody === 0 ? String(waste.total) : `${waste.total} (${waste.droppedForNobody} dropped)`;
}

export const COMPARISON_HEADER = [
  "strategy",
  "verdict",
  "baseline OK/s",
  "outage load",
  "peak concurrency",
  "peak delay",
  "server back",
  "clients back",
  "wasted work",
  "goodput after resume",
  "retry amplification",
];
/** The page's table keeps to the columns that fit its width; the terminal's has them all. */
const PAGE_COLUMNS = 9;

/** One row per strategy: what a reader compares first. */
export function comparisonRows(results: readonly StrategyResult[]): string[][] {
  return results.map(({ strategy, metrics, phases, server }) => {
    // The run ended before the resume: no figure after it to show.
    const after = (text: string) =>
      phases.endMs >= phases.resumeAtMs && metrics.verdict !== "too-short" && metrics.verdict !== "invalid" ? text : "-";
    // A service of the user's (demo -target) reports nothing: no concurrency nor delay of its to show. (A results
    // file's rows carry no samples at all, and keep their figures.)
    const unreported = Array.isArray(server) && server.length === 0;
    const reported = (text: string) => (unreported ? "-" : after(text));
    return [
      strategy,
      metrics.verdict,
      metrics.baselineOkPerSec.toFixed(1),
      `${metrics.outageAmplification.toFixed(2)}x (peak ${metrics.peakAmplification.toFixed(2)}x)`,
      reported(String(metrics.peakConcurrencyAfterResume)),
      reported(readableDelay(metrics.peakDelayAfterResumeMs)),
      after(timeOrNever(metrics.serverRecoveryMs)),
      after(timeOrNever(metrics.clientRecoveryMs)),
      describeWaste(metrics.wastedWork),
      // Results files written before these two figures existed lack them.
      typeof metrics.goodputAfterResumeOkPerSec === "number" ? after(`${metrics.goodputAfterResumeOkPerSec.toFixed(1)}/s`) : "-",
      metrics.retryAmplification === undefined ? "-" : after(`${metrics.retryAmplification.toFixed(2)}x`),
    ];
  });
}

/** The comparison as aligned text, for the terminal. */
export function comparisonTable(results: readonly StrategyResult[]): string {
  return textTable([COMPARISON_HEADER, ...comparisonRows(results)]);
}

/** What the charts shade, for a subtitle: "outage shaded", or each fault by kind and time. */
export function shadedText(phases: Phases): string {
  const bands = troubleBands(phases);
  return phases.faults === undefined || phases.faults.length === 0 ? "outage shaded" : `shaded: ${bandsText(bands)}`;
}

/** The trouble as Vega-Lite layers: a red band per fault, its name at the top. */
function bandLayers(phases: Phases, domain: readonly number[]): object[] {
  const values = troubleBands(phases).map((band) => ({ start: seconds(band.fromMs), end: seconds(band.toMs), label: band.label }));
  const x = { field: "start", type: "quantitative", scale: { domain } };
  return [
    { data: { values }, mark: { type: "rect", color: "#d62728", opacity: 0.12 }, encoding: { x, x2: { field: "end" } } },
    {
      data: { values },
      mark: { type: "text", align: "left", baseline: "top", dx: 3, dy: 3, fontSize: 10, color: "#555" },
      encoding: { x, y: { value: 0 }, text: { field: "label" } },
    },
  ];
}

/**
 * The chart of one run, as Vega-Lite: server concurrency and delay per second (log
 * scales), client rates per window; the outage shaded and recovery marked.
 */
export function chartSpec(result: StrategyResult): TopLevelSpec {
  const { phases, metrics } = result;
  const domain = [0, seconds(phases.endMs)];
  const x = timeAxis(domain);
  const outageLayer = bandLayers(phases, domain);
  const recovery = recoveryLayer(result, domain);
  const panel: Panel = (title, layer) => ({ title, width: 640, height: 150, layer: [...outageLayer, layer, recovery] });
  const serverValues = result.server.map((sample) => ({
    t: seconds(sample.atMs),
    concurrency: sample.concurrency,
    delay: Number.isFinite(sample.lastDelayMs) && sample.lastDelayMs > 0 ? seconds(sample.lastDelayMs) : null,
  }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `${result.strategy}: ${metrics.verdict}`, subtitle: `${shadedText(phases)}; dashed lines mark recovery` },
    vconcat: [
      panel("server: requests in service (log)", {
        data: { values: serverValues },
        mark: { type: "line", interpolate: "step-after", color: "#1f77b4" },
        encoding: { x, y: { field: "concurrency", type: "quantitative", title: "concurrency", scale: { type: "symlog" } } },
      }),
      ...queuePanels(result.server, x, panel),
      panel("server: last delay, seconds (log)", {
        data: { values: serverValues.filter((value) => value.delay !== null) },
        mark: { type: "line", interpolate: "step-after", color: "#9467bd" },
        encoding: { x, y: { field: "delay", type: "quantitative", title: "delay (s)", scale: { type: "log" } } },
      }),
      panel("client: per second, each window", clientLayer(result.client, x)),
    ],
    // The queue panel and the client panel colour their own series.
    resolve: { scale: { color: "independent" } },
  } as TopLevelSpec;
}

/** A chart's panel: a title and a layer, drawn over the trouble's bands and under the recovery marks. */
type Panel = (title: string, layer: object) => object;

/** The time axis every panel shares: seconds from the start to the end of the run. */
function timeAxis(domain: readonly number[]) {
  return { field: "t", type: "quantitative", title: "seconds", scale: { domain, nice: false } } as const;
}

type TimeAxis = ReturnType<typeof timeAxis>;

/** When the server and the clients recovered, as dashed rules (none for what never recovered). */
function recoveryLayer({ phases, metrics }: StrategyResult, domain: readonly number[]) {
  const marks = [
    { at: seconds(phases.resumeAtMs + (metrics.serverRecoveryMs ?? Number.NaN)), label: "server recovered" },
    { at: seconds(phases.resumeAtMs + (metrics.clientRecoveryMs ?? Number.NaN)), label: "clients recovered" },
  ].filter((mark) => Number.isFinite(mark.at));
  return {
    data: { values: marks },
    mark: { type: "rule", strokeDash: [4, 3], color: "#2ca02c" },
    encoding: { x: { field: "at", type: "quantitative", scale: { domain } }, tooltip: { field: "label" } },
  } as const;
}

/** The queue model's queue and threads busy, as one panel; none where the samples lack them. */
function queuePanels(server: readonly ServerSample[], x: TimeAxis, panel: Panel): object[] {
  const queueValues = server.flatMap((sample) =>
    sample.queueLength === undefined
      ? []
      : [
          { t: seconds(sample.atMs), series: "queue waiting", count: sample.queueLength },
          { t: seconds(sample.atMs), series: "threads busy", count: sample.threadsBusy ?? 0 },
        ],
  );
  if (queueValues.length === 0) return [];
  return [
    panel("server: queue waiting and threads busy (log)", {
      data: { values: queueValues },
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x,
        y: { field: "count", type: "quantitative", title: "requests", scale: { type: "symlog" } },
        color: {
          field: "series",
          type: "nominal",
          scale: { domain: ["queue waiting", "threads busy"], range: ["#8c564b", "#17becf"] },
        },
      },
    }),
  ];
}

/** The clients' rates per second in each window: OK, errors, timed out, attempts. */
function clientLayer(client: readonly ClientWindow[], x: TimeAxis): object {
  const clientValues = client.flatMap((window) =>
    (
      [
        ["OK", window.okPerSec],
        ["errors", window.errorsPerSec],
        ["timedout", window.timedoutPerSec],
        ["attempts", window.attemptsPerSec],
      ] as const
    ).map(([series, rate]) => ({ t: seconds(window.endMs), series, rate })),
  );
  return {
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
  };
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

/** One colour per strategy, the same in the interactive charts and the static ones. */
const STRATEGY_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/**
 * Every strategy on shared axes, as static SVG: requests in service, delay and goodput.
 * The report shows it when printed or without scripts; on screen the same charts are
 * interactive.
 */
export function overlaySpec(results: readonly StrategyResult[]): TopLevelSpec {
  const endS = Math.max(...results.map((result) => seconds(result.phases.endMs)));
  const first = results[0]!.phases;
  const domain = [0, endS];
  const x = { field: "t", type: "quantitative", title: "seconds since the run started", scale: { domain, nice: false } } as const;
  const color = {
    field: "strategy",
    type: "nominal",
    title: "strategy",
    scale: { domain: results.map((result) => result.strategy), range: STRATEGY_COLOURS },
  } as const;
  const outageLayer = bandLayers(first, domain);
  const server = results.flatMap((result) =>
    result.server.map((sample) => ({
      strategy: result.strategy,
      t: seconds(sample.atMs),
      concurrency: sample.concurrency,
      delay: Number.isFinite(sample.lastDelayMs) && sample.lastDelayMs > 0 ? seconds(sample.lastDelayMs) : null,
    })),
  );
  const client = results.flatMap((result) =>
    result.client.map((window) => ({ strategy: result.strategy, t: seconds(window.endMs), ok: window.okPerSec })),
  );
  const panel = (title: string, values: object[], field: string, axisTitle: string, scale: object) => ({
    title,
    width: 640,
    height: 150,
    layer: [
      ...outageLayer,
      {
        data: { values },
        mark: { type: "line", interpolate: "step-after", strokeWidth: 1.5 },
        encoding: { x, y: { field, type: "quantitative", title: axisTitle, scale }, color },
      },
    ],
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "every strategy on shared axes", subtitle: shadedText(first) },
    vconcat: [
      panel("server: requests in service (log)", server, "concurrency", "concurrency", { type: "symlog" }),
      panel(
        "server: modelled delay, seconds (log)",
        server.filter((value) => value.delay !== null),
        "delay",
        "delay (s)",
        { type: "log" },
      ),
      panel("client: goodput, OK per second", client, "ok", "OK/s", { type: "linear" }),
    ],
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}

/** A setting of the run, as the report's settings table shows it. */
export interface ReportSetting {
  readonly name: string;
  readonly value: string;
}

/** The report and the per-strategy charts it contains (the demo also writes them as files). */
export async function renderReport(
  title: string,
  results: readonly StrategyResult[],
  settings: readonly ReportSetting[],
  scenario?: ScenarioSource,
  predicted: readonly StrategyResult[] = [],
): Promise<{ html: string; strategySvgs: string[] }> {
  const strategySvgs: string[] = [];
  for (const result of results) strategySvgs.push(await renderSvg(chartSpec(result)));
  const overlaySvg = await renderSvg(overlaySpec(results));
  return { html: reportHtml({ title, results, settings, strategySvgs, overlaySvg, scenario, predicted }), strategySvgs };
}

/** A chain's figures per tier, for each strategy: the table of the terminal, the first collapse, and a chart of arrivals per tier. */
function tierSections(results: readonly StrategyResult[]): string {
  const chains = results.flatMap((result, index) =>
    result.chain === undefined ? [] : [{ strategy: result.strategy, chain: result.chain, index }],
  );
  if (chains.length === 0) return "";
  const row = (cells: readonly string[], tag: string) => `<tr>${cells.map((text) => `<${tag}>${escapeHtml(text)}</${tag}>`).join("")}</tr>`;
  return (
    "<h2>Per tier</h2>\n<p>Arrivals are the attempts that reached a tier (sent by its callers), amplification is arrivals ÷ the users' " +
    "requests (over the run, during the faults, and from the policies: the product of the attempts above), peak load the most " +
    "arrivals per second ÷ those before the first fault, goodput the OK answers its callers got, for nobody the answers completed " +
    "after the caller had given up (docs/tiers.md). The table's times are from the users' start, as the faults'; the chart's from the run's start, as the charts above.</p>\n" +
    chains
      .map(
        ({ strategy, chain, index }) =>
          `<section class="tiers-of"><h3>${escapeHtml(strategy)}</h3>\n<div class="table-wrap"><table class="tiers">\n` +
          `<thead>${row(TIER_HEADER, "th")}</thead>\n<tbody>\n${tierRows(chain.tiers)
            .map((cells) => row(cells, "td"))
            .join("\n")}\n</tbody></table></div>\n<p>${escapeHtml(chain.firstCollapsedText)}</p>\n` +
          `<figure><figcaption>arrivals per second at each tier (log scale)</figcaption><div class="tier-arrivals" data-strategy="${index}"></div></figure></section>`,
      )
      .join("\n")
  );
}

/** JSON inside a <script> element: nothing in it may close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/** What the interactive charts draw: times in seconds, an infinite or zero delay as null. */
function chartData(results: readonly StrategyResult[]) {
  return {
    limit: results[0]?.concurrencyLimit ?? 0,
    colours: STRATEGY_COLOURS,
    strategies: results.map((result) => ({
      name: result.strategy,
      verdict: result.metrics.verdict,
      phases: { stopS: seconds(result.phases.stopAtMs), resumeS: seconds(result.phases.resumeAtMs), endS: seconds(result.phases.endMs) },
      bands: troubleBands(result.phases).map((band) => ({ fromS: seconds(band.fromMs), toS: seconds(band.toMs), name: band.label })),
      server: {
        t: result.server.map((sample) => seconds(sample.atMs)),
        concurrency: result.server.map((sample) => sample.concurrency),
        delay: result.server.map((sample) =>
          Number.isFinite(sample.lastDelayMs) && sample.lastDelayMs > 0 ? seconds(sample.lastDelayMs) : null,
        ),
      },
      client: { t: result.client.map((window) => seconds(window.endMs)), ok: result.client.map((window) => window.okPerSec) },
      // A chain's arrivals per tier, times from the users' start as the tier table's.
      ...(result.chain === undefined
        ? {}
        : {
            tiers: result.chain.series.map((tier) => ({
              name: tier.name,
              t: tier.points.map((point) => point.atS),
              arrivals: tier.points.map((point) => point.arrivalsPerSec),
            })),
          }),
    })),
  };
}

const REPORT_CSS = `body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}th,td{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
thead th{border-bottom:2px solid #999;vertical-align:bottom}.comparison td:nth-child(n+3){text-align:right}
.comparison th,.comparison td{padding:.3em .5em}
.table-wrap{overflow-x:auto}.collapsed{color:#b22}.recovered{color:#272}.recovering{color:#a60}.too-short{color:#666}.invalid{color:#639;font-weight:bold}section{margin:2em 0;break-inside:avoid}
dt{font-weight:600}figure{margin:1em 0}figcaption{font-weight:600}.settings th{font-weight:600;white-space:nowrap}
.static-charts svg,.strategy svg{max-width:100%;height:auto}
html:not(.js) .live-charts,.js .static-charts{display:none}
@media print{body{max-width:none;margin:0}.live-charts{display:none!important}.js .static-charts{display:block!important}h2{break-after:avoid}}`;

/** The comparison table's rows as HTML: the strategy a header cell, the verdict a cell of its class. */
function comparisonHtmlRows(results: readonly StrategyResult[], cell: (tag: string, text: string, className?: string) => string): string {
  return comparisonRows(results)
    .map(
      (row) =>
        `<tr>${row
          .slice(0, PAGE_COLUMNS)
          .map((text, column) => cell(column === 0 ? "th" : "td", text, column === 1 ? text : undefined))
          .join("")}</tr>`,
    )
    .join("\n");
}

/**
 * A self-contained page that works offline: the comparison table, why each verdict, the
 * settings, every strategy overlaid on shared axes (uPlot, inlined, with zoom and hover
 * values; static SVG when printed or without scripts), then each strategy in detail.
 */
export function reportHtml(report: {
  readonly title: string;
  readonly results: readonly StrategyResult[];
  readonly settings: readonly ReportSetting[];
  /** The scenario file the run read, if any. */
  readonly scenario?: ScenarioSource | undefined;
  /** The simulator's runs of the same scenario (demo -target), named "<strategy> (simulator)": table rows beside the real ones. */
  readonly predicted?: readonly StrategyResult[] | undefined;
  readonly strategySvgs: readonly string[];
  readonly overlaySvg: string;
}): string {
  const { title, results, settings, strategySvgs, overlaySvg, scenario, predicted = [] } = report;
  const cell = (tag: string, text: string, className?: string) =>
    `<${tag}${className === undefined ? "" : ` class="${className}"`}>${escapeHtml(text)}</${tag}>`;
  const rows = comparisonHtmlRows([...results, ...predicted], cell);
  const why = results
    .map(
      (result) =>
        `<p><b>${escapeHtml(result.strategy)}: <span class="${result.metrics.verdict}">${result.metrics.verdict}</span>.</b> ${escapeHtml(explainVerdict(result.metrics))}</p>`,
    )
    .join("\n");
  const sections = results
    .map(
      (result, index) =>
        `<section class="strategy"><h3>${escapeHtml(result.strategy)}: <span class="${result.metrics.verdict}">${result.metrics.verdict}</span></h3>\n` +
        `<p>${escapeHtml(explainVerdict(result.metrics))}</p>\n${strategySvgs[index] ?? ""}</section>`,
    )
    .join("\n");
  const figure = (id: string, caption: string) => `<figure><figcaption>${caption}</figcaption><div id="${id}"></div></figure>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<script>document.documentElement.classList.add("js")</script>
<style>${readFileSync(uPlotFile("uPlot.min.css"), "utf8")}</style>
<style>${REPORT_CSS}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<div class="table-wrap"><table class="comparison">
<thead><tr>${COMPARISON_HEADER.slice(0, PAGE_COLUMNS)
    .map((title) => cell("th", title))
    .join("")}</tr></thead>
<tbody>
${rows}
</tbody></table></div>
<dl>
<dt>baseline OK/s</dt><dd>mean OK rate of the steady-state windows before the outage (the first window left out)</dd>
<dt>outage load</dt><dd>client attempts per second during the outage ÷ baseline (mean, and the worst window)</dd>
<dt>peak concurrency, peak delay</dt><dd>largest requests in service and modelled delay after the server was resumed</dd>
<dt>server back</dt><dd>from SIGCONT until concurrency stays at or below the limit to the end</dd>
<dt>clients back</dt><dd>from SIGCONT to the end of the first of two windows in a row with OK ≥ 90 % of baseline and errors + timeouts ≤ 5 % of it</dd>
${VERDICTS.map((verdict) => `<dt>${verdict}</dt><dd>${escapeHtml(VERDICT_DEFINITIONS[verdict])}</dd>`).join("\n")}
</dl>
<h2>Why</h2>
${why}
<h2>Settings</h2>
<table class="settings"><tbody>
${settings.map((setting) => `<tr>${cell("th", setting.name)}${cell("td", setting.value)}</tr>`).join("\n")}
</tbody></table>
${scenarioSection(scenario)}<h2>Every strategy on shared axes</h2>
<div class="live-charts">
<p>${escapeHtml(shadedText(results[0]?.phases ?? { stopAtMs: 0, resumeAtMs: 0, endMs: 0 }).replace(/^./, (c) => c.toUpperCase()))}. Drag across a chart to zoom, double-click to zoom out; the values under the cursor show below each chart.</p>
${figure("overlay-concurrency", "server: requests in service (log scale), the limit dashed")}
${figure("overlay-delay", "server: modelled delay, seconds (log scale)")}
${figure("overlay-goodput", "client: goodput, OK per second")}
</div>
<div class="static-charts">${overlaySvg}</div>
${tierSections(results)}<h2>Each strategy</h2>
${sections}
<script type="application/json" id="report-data">${scriptJson(chartData(results))}</script>
<script>${readFileSync(uPlotFile("uPlot.iife.min.js"), "utf8")}</script>
<script>${readFileSync(chartScriptFile("charts.js"), "utf8")}</script>
<script>${readFileSync(chartScriptFile("report-charts.js"), "utf8")}</script>
</body></html>
`;
}

import type { TopLevelSpec } from "vega-lite";
import { formatDuration } from "../cli/duration.ts";
import { type Fault, faultLabel, formatFault } from "../model/faults/fault-schedule.ts";
import type { ClientWindow, ServerSample } from "../model/timeline.ts";
import { serverIsBack, type Verdict } from "../model/verdict.ts";
import { escapeHtml, PAGE_STYLE, scenarioSection } from "../report/html.ts";
import type { ScenarioSource } from "../report/html.ts";
import { textTable as table } from "../report/text-table.ts";
import { latencyText, longestText, percent, seconds } from "./ranking.ts";
import type { Snippet } from "./snippets.ts";
import type { CandidateSummary, OutageSummary } from "./summary.ts";

/*
 * What choose shows: the ranked table for the terminal, and the self-contained report page
 * (inline SVG, no scripts, no network) with the table, the Pareto chart, the timelines of
 * the top candidates and fixed retry, the configuration snippets and the validation.
 */

export interface Timeline {
  readonly id: string;
  readonly outageMs: number;
  /** With -faults: the schedule run instead of the outage, times from the run's start. */
  readonly faults?: readonly Fault[] | undefined;
  /** When the trouble began: the stop, or the schedule's first fault; the chart's time 0. */
  readonly stopAtMs: number;
  readonly server: readonly ServerSample[];
  readonly client: readonly ClientWindow[];
}

export interface ValidationRow {
  readonly id: string;
  readonly outageMs: number;
  readonly simulated: Verdict;
  readonly simulatedSeeds: readonly Verdict[];
  readonly measured: Verdict;
  readonly agrees: boolean;
  readonly simulatedServerRecoveryMs: number | null;
  readonly measuredServerRecoveryMs: number | null;
  readonly simulatedClientRecoveryMs: number | null;
  readonly measuredClientRecoveryMs: number | null;
  readonly simulatedPeakConcurrency: number;
  /** Null on a target: a watcher does not see how many requests it holds. */
  readonly measuredPeakConcurrency: number | null;
}

/** With -target: whether the winner did better on the service than the named loser (undefined: cannot tell), in a line. */
export interface Order {
  readonly holds: boolean | undefined;
  readonly words: string;
}

/** What -validate ran on, each candidate's row, and on a target choose's order there. */
export interface Validation {
  /** "the real ./server and ./client", or "your service at <url>". */
  readonly on: string;
  readonly rows: readonly ValidationRow[];
  readonly order: Order | undefined;
  /** Why it ended before its runs were done (the service could not be played); absent when it ran. */
  readonly failure?: string;
}

const never = (ms: number | null) => (ms === null ? "never" : seconds(ms));

/** "recovered 3s/45s" (server back / clients back, worst seed), "recovering 4s/-", "collapsed", "too-short (1/2 ok)". */
export function outageCell(outage: OutageSummary): string {
  if (!outage.survived) {
    const survived = outage.verdicts.filter(serverIsBack).length;
    return survived > 0 ? `${outage.verdict} (${survived}/${outage.verdicts.length} ok)` : outage.verdict;
  }
  const server = outage.serverRecoveryMs === null ? "-" : seconds(outage.serverRecoveryMs);
  const clients = outage.clientRecoveryMs === null ? "-" : seconds(outage.clientRecoveryMs);
  return `${outage.verdict} ${server}/${clients}`;
}

/** What the table's columns and brackets mean, printed under it. */
export const TABLE_LEGEND =
  "Columns: success within the SLO; the median and p99 wait of the successful requests that needed a retry, first try to " +
  "success; retry amplification; in brackets, the spread across seeds (largest less smallest). " +
  "Outage cells: verdict (worst seed), then server back / clients back after the resume (slowest seed).";

/** A figure with its spread across seeds in brackets; no spread with one seed, nor beside a figure that is missing ("-"). */
const withSpread = (text: string, spread: string, seeds: number) => (seeds > 1 && text !== "-" ? `${text} (${spread})` : text);

/** The figures users feel and the load, each with its spread across seeds: the cells the table, the page and docs/choose.md share. */
export function everydayCells(summary: CandidateSummary): string[] {
  const everyday = summary.everyday;
  const spread = everyday.spread;
  return [
    withSpread(percent(everyday.sloSuccess), (spread.sloSuccess * 100).toFixed(2), summary.seeds),
    latencyText(everyday.retriedP50Ms),
    withSpread(latencyText(everyday.retriedP99Ms), latencyText(spread.retriedP99Ms), summary.seeds),
    withSpread(`${everyday.amplification.toFixed(3)}x`, spread.amplification.toFixed(3), summary.seeds),
  ];
}

export const EVERYDAY_HEADER = ["within SLO", "retried p50", "retried p99", "amplification"] as const;

/** The ranked table: one row per candidate, numbered by `ranks` when it shows only some of a ranking. */
export function rankedTable(ranked: readonly CandidateSummary[], maxOutageMs: number, ranks?: readonly number[]): string {
  const outages = ranked[0]?.outages.map((outage) => formatDuration(outage.outageMs)) ?? [];
  const header = ["rank", "candidate", ...EVERYDAY_HEADER, "survives", ...outages.map((outage) => `${outage} outage`)];
  const rows = ranked.map((summary, index) => [
    String(ranks?.[index] ?? index + 1),
    summary.candidate.id,
    ...everydayCells(summary),
    longestText(summary, maxOutageMs, false),
    ...summary.outages.map(outageCell),
  ]);
  return table([header, ...rows]);
}

/** Each listed outage of a few candidates, in detail. */
export function outageDetails(summaries: readonly CandidateSummary[]): string {
  const header = ["candidate", "outage", "verdict by seed", "server back", "clients back", "peak load", "served for nobody"];
  const rows = summaries.flatMap((summary) =>
    summary.outages.map((outage) => [
      summary.candidate.id,
      formatDuration(outage.outageMs),
      outage.verdicts.join(","),
      never(outage.serverRecoveryMs),
      never(outage.clientRecoveryMs),
      outage.peakLoad === null ? "-" : `${outage.peakLoad.toFixed(2)}x`,
      outage.servedForNobody.toFixed(0),
    ]),
  );
  return table([header, ...rows]);
}

export function validationTable(rows: readonly ValidationRow[]): string {
  const header = [
    "candidate",
    "outage",
    "simulated",
    "measured",
    "agree",
    "server back sim/real",
    "clients back sim/real",
    "peak concurrency sim/real",
  ];
  return table([
    header,
    ...rows.map((row) => [
      row.id,
      formatDuration(row.outageMs),
      `${row.simulated} (${row.simulatedSeeds.join(",")})`,
      row.measured,
      row.agrees ? "yes" : "NO",
      `${never(row.simulatedServerRecoveryMs)} / ${never(row.measuredServerRecoveryMs)}`,
      `${never(row.simulatedClientRecoveryMs)} / ${never(row.measuredClientRecoveryMs)}`,
      `${row.simulatedPeakConcurrency} / ${row.measuredPeakConcurrency ?? "-"}`,
    ]),
  ]);
}

/** Success within the SLO against the longest outage survived, the front joined, the winner, runner-up and baselines named. */
export function paretoSpec(
  summaries: readonly CandidateSummary[],
  front: readonly CandidateSummary[],
  named: ReadonlyMap<string, string>,
  maxOutageMs: number,
): TopLevelSpec {
  const frontIds = new Set(front.map((summary) => summary.candidate.id));
  const points = summaries.map((summary) => ({
    id: summary.candidate.id,
    success: Number((summary.everyday.sloSuccess * 100).toFixed(4)),
    outage: (summary.longestIsAtLeast ? maxOutageMs : summary.longestSurvivedMs) / 1000,
    group: frontIds.has(summary.candidate.id)
      ? "Pareto front"
      : summary.survivesAll
        ? "survives every listed outage"
        : "collapses after a listed outage",
    label: named.get(summary.candidate.id) ?? "",
  }));
  const frontLine = points.filter((point) => frontIds.has(point.id)).sort((a, b) => a.outage - b.outage);
  const x = { field: "outage", type: "quantitative", title: "longest outage survived (s, symlog)", scale: { type: "symlog" } } as const;
  const y = {
    field: "success",
    type: "quantitative",
    title: "success within the SLO (%)",
    scale: { zero: false },
    axis: { format: ".2f" },
  } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: "Success within the SLO against the longest outage survived",
      subtitle: "upper right is better; the line joins the Pareto front",
    },
    width: 640,
    height: 360,
    layer: [
      { data: { values: frontLine }, mark: { type: "line", color: "#999", strokeDash: [4, 3] }, encoding: { x, y } },
      {
        data: { values: points },
        mark: { type: "point", filled: true, size: 70 },
        encoding: {
          x,
          y,
          color: {
            field: "group",
            type: "nominal",
            title: null,
            legend: { labelLimit: 400, orient: "bottom" },
            scale: {
              domain: ["Pareto front", "survives every listed outage", "collapses after a listed outage"],
              range: ["#2ca02c", "#1f77b4", "#d62728"],
            },
          },
          tooltip: [{ field: "id" }, { field: "success" }, { field: "outage" }],
        },
      },
      // The winner's label above its point, the others below theirs, so that two on one spot stay readable.
      {
        data: { values: points.filter((point) => point.label.startsWith("winner")) },
        mark: { type: "text", align: "left", dx: 7, dy: -9, fontSize: 11 },
        encoding: { x, y, text: { field: "label" } },
      },
      {
        data: { values: points.filter((point) => point.label !== "" && !point.label.startsWith("winner")) },
        mark: { type: "text", align: "left", dx: 7, dy: 12, fontSize: 11 },
        encoding: { x, y, text: { field: "label" } },
      },
    ],
  } as TopLevelSpec;
}

/** The timelines of a few candidates around one outage, overlaid: requests in service, and OK per second. */
export function timelineSpec(timelines: readonly Timeline[]): TopLevelSpec {
  const first = timelines[0]!;
  const t = (ms: number) => (ms - first.stopAtMs) / 1000;
  const server = timelines.flatMap((timeline) =>
    timeline.server.map((sample) => ({ t: t(sample.atMs), candidate: timeline.id, concurrency: sample.concurrency })),
  );
  const client = timelines.flatMap((timeline) =>
    timeline.client.map((window) => ({ t: t(window.endMs), candidate: timeline.id, ok: window.okPerSec })),
  );
  // Each fault of a schedule shaded and named by its kind; else the one outage.
  const outage =
    first.faults === undefined
      ? [{ start: 0, end: first.outageMs / 1000, label: "outage" }]
      : first.faults.map((fault) => ({
          start: t(fault.atMs),
          end: t(fault.atMs + fault.durationMs),
          label: faultLabel(fault),
        }));
  const x = { field: "t", type: "quantitative", title: "seconds from the stop" } as const;
  const color = {
    field: "candidate",
    type: "nominal",
    title: null,
    legend: { labelLimit: 400, orient: "bottom" },
    scale: { domain: timelines.map((timeline) => timeline.id) },
  } as const;
  const shade = [
    {
      data: { values: outage },
      mark: { type: "rect", color: "#d62728", opacity: 0.12 },
      encoding: { x: { field: "start", type: "quantitative" }, x2: { field: "end" } },
    },
    {
      data: { values: outage },
      mark: { type: "text", align: "left", baseline: "top", dx: 3, dy: 3, fontSize: 10, color: "#555" },
      encoding: { x: { field: "start", type: "quantitative" }, y: { value: 0 }, text: { field: "label" } },
    },
  ] as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text:
        first.faults === undefined
          ? `A ${formatDuration(first.outageMs)} outage (shaded), first seed`
          : `${first.faults.map((fault) => formatFault(fault, formatDuration)).join(", ")} (shaded), first seed`,
    },
    vconcat: [
      {
        title: "server: requests in service (symlog)",
        width: 640,
        height: 170,
        layer: [
          ...shade,
          {
            data: { values: server },
            mark: { type: "line", interpolate: "step-after" },
            encoding: { x, y: { field: "concurrency", type: "quantitative", scale: { type: "symlog" }, title: "in service" }, color },
          },
        ],
      },
      {
        title: "clients: OK per second, each window",
        width: 640,
        height: 170,
        layer: [
          ...shade,
          {
            data: { values: client },
            mark: { type: "line", point: true },
            encoding: { x, y: { field: "ok", type: "quantitative", title: "OK/s" }, color },
          },
        ],
      },
    ],
  } as TopLevelSpec;
}

export interface ReportPage {
  readonly title: string;
  readonly settings: readonly string[];
  readonly recommendation: readonly string[];
  readonly rule: string;
  readonly ranked: readonly CandidateSummary[];
  readonly maxOutageMs: number;
  readonly paretoSvg: string;
  readonly timelineSvgs: readonly string[];
  readonly snippets: readonly Snippet[];
  readonly validation: Validation | undefined;
  readonly skipped: readonly string[];
  readonly commands: ReadonlyMap<string, string>;
  /** The scenario file the run read, if any. */
  readonly scenario?: ScenarioSource | undefined;
}

/** The report page: self-contained, no scripts, no network. */
export function reportHtml(page: ReportPage): string {
  const outages = page.ranked[0]?.outages.map((outage) => outage.outageMs) ?? [];
  const head = [
    "rank",
    "candidate",
    ...EVERYDAY_HEADER,
    "survives",
    ...outages.flatMap((ms) => [`${formatDuration(ms)}: verdict`, "server / clients back", "peak load", "served for nobody"]),
  ];
  const rows = page.ranked.map((summary, index) => {
    const cells = [
      String(index + 1),
      `<code title="${escapeHtml(page.commands.get(summary.candidate.id) ?? "")}">${escapeHtml(summary.candidate.id)}</code>`,
      ...everydayCells(summary),
      escapeHtml(longestText(summary, page.maxOutageMs, false)),
      ...summary.outages.flatMap((outage) => [
        `<span class="${outage.verdict}">${escapeHtml(outage.verdicts.join(", "))}</span>`,
        `${never(outage.serverRecoveryMs)} / ${never(outage.clientRecoveryMs)}`,
        outage.peakLoad === null ? "-" : `${outage.peakLoad.toFixed(2)}x`,
        outage.servedForNobody.toFixed(0),
      ]),
    ];
    return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`;
  });
  const validation =
    page.validation === undefined
      ? ""
      : `<h2>Validation with ${escapeHtml(page.validation.on)}</h2>
${page.validation.failure === undefined ? "" : `<p class="alarm">-validate failed: ${escapeHtml(page.validation.failure)}</p>`}
${page.validation.rows.some((row) => !row.agrees) ? '<p class="alarm">THE SIMULATOR AND THE REAL RUNS DISAGREE ON A VERDICT: see the rows marked NO.</p>' : "<p>The simulator and the real runs agree on every verdict.</p>"}
<pre>${escapeHtml(validationTable(page.validation.rows))}</pre>
${page.validation.order === undefined ? "" : `<p${page.validation.order.holds === false ? ' class="alarm"' : ""}>${escapeHtml(page.validation.order.words)}</p>`}`;
  const snippets = page.snippets
    .map(
      (snippet) => `<h3>${escapeHtml(snippet.title)} <small>(${escapeHtml(snippet.file)})</small></h3>
${snippet.notes.length > 0 ? `<ul>${snippet.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join("")}</ul>` : ""}
<pre>${escapeHtml(snippet.text)}</pre>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title>
<style>${PAGE_STYLE}
.collapsed{color:#b00}.recovering{color:#a60}.recovered{color:#070}.too-short{color:#666}.alarm{color:#fff;background:#b00;padding:.5em;font-weight:700}
</style></head>
<body><h1>${escapeHtml(page.title)}</h1>
<h2>Recommendation</h2>
${page.recommendation.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join("\n")}
<h2>Ranking</h2>
<p>${escapeHtml(page.rule)}</p>
<p>${escapeHtml(TABLE_LEGEND)}</p>
<p>Recovery times are the slowest seed's ("never" when some seed did not recover within the observation); peak load is the worst
outage window's attempts per second ÷ the normal OK rate ("-" when the outage is shorter than a client window); served for nobody is
the mean number of requests the server completed after their client had given up. Hover a candidate for its ./sim command.</p>
<div style="overflow-x:auto"><table><tr>${head.map((cell) => `<th>${escapeHtml(cell)}</th>`).join("")}</tr>
${rows.join("\n")}</table></div>
<h2>Pareto front</h2>
${page.paretoSvg}
<h2>Timelines</h2>
${page.timelineSvgs.join("\n")}
<h2>The winner's settings for other systems</h2>
${snippets}
${validation}
<h2>Settings</h2>
<ul>${page.settings.map((setting) => `<li>${escapeHtml(setting)}</li>`).join("")}</ul>
${scenarioSection(page.scenario)}${page.skipped.length > 0 ? `<h2>Left out of the grid</h2><ul>${page.skipped.map((entry) => `<li>${escapeHtml(entry)}</li>`).join("")}</ul>` : ""}
</body></html>
`;
}

/** JSON has no Infinity or undefined: "Infinity" and null. */
export function jsonNumbers(_key: string, value: unknown): unknown {
  if (value === undefined) return null;
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

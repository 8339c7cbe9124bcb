import type { TopLevelSpec } from "vega-lite";
import type { ScenarioMetrics } from "../model/scenario-metrics.ts";
import { VERDICTS } from "../model/verdict.ts";

/** A phase diagram: one cell per parameter value and strategy, coloured by verdict, labelled with recovery time. */
export function sweepChart(
  param: string,
  order: readonly string[],
  rows: readonly { value: string; strategy: string; metrics: ScenarioMetrics }[],
): TopLevelSpec {
  const values = rows.map(({ value, strategy, metrics }) => ({
    value,
    strategy,
    verdict: metrics.verdict,
    label: metrics.clientRecoveryMs === undefined ? "—" : `${(metrics.clientRecoveryMs / 1000).toFixed(0)}s`,
  }));
  const x = { field: "value", type: "ordinal", title: param, sort: [...order] } as const;
  const y = { field: "strategy", type: "nominal", title: null } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `verdict by ${param}`, subtitle: "cell text: time until the clients were back (— never)" },
    data: { values },
    width: { step: 70 },
    height: { step: 28 },
    layer: [
      {
        mark: "rect",
        encoding: {
          x,
          y,
          color: {
            field: "verdict",
            type: "nominal",
            scale: { domain: [...VERDICTS], range: ["#9fd8a0", "#e6e29a", "#f2a5a5", "#dddddd", "#b9a6d8"] },
          },
        },
      },
      { mark: { type: "text", fontSize: 11 }, encoding: { x, y, text: { field: "label" } } },
    ],
  } as TopLevelSpec;
}

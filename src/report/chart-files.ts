import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** A file of uPlot's distribution (the chart library of the dashboard and the report), resolved as a dependency. */
export function uPlotFile(name: "uPlot.iife.min.js" | "uPlot.min.css"): string {
  return createRequire(import.meta.url).resolve(`uplot/dist/${name}`);
}

/**
 * The browser scripts of the charts, beside this module: charts.js (what the dashboard and
 * the report share) and report-charts.js (the report's own). The build copies them next to
 * its output, and the shims' bundler next to the bundle.
 */
export function chartScriptFile(name: "charts.js" | "report-charts.js"): string {
  return fileURLToPath(new URL(`./${name}`, import.meta.url));
}

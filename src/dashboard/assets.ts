import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chartScriptFile, uPlotFile } from "../report/chart-files.ts";

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/**
 * The page's files, read once at start. Ours sit in `page/` beside this module (the build
 * and the shims' bundler copy the folder next to their output), the charts' shared script in
 * src/report; uPlot's are resolved as a dependency, so the page needs no network in a
 * checkout and in an installed package alike.
 */
export function loadAssets(): ReadonlyMap<string, Asset> {
  const page = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));
  const files: [string, string, string][] = [
    ["/", page("index.html"), "text/html; charset=utf-8"],
    ["/charts.js", chartScriptFile("charts.js"), "text/javascript; charset=utf-8"],
    ["/dashboard.js", page("dashboard.js"), "text/javascript; charset=utf-8"],
    ["/dashboard.css", page("dashboard.css"), "text/css; charset=utf-8"],
    ["/uPlot.iife.min.js", uPlotFile("uPlot.iife.min.js"), "text/javascript; charset=utf-8"],
    ["/uPlot.min.css", uPlotFile("uPlot.min.css"), "text/css; charset=utf-8"],
  ];
  return new Map(files.map(([path, file, type]) => [path, { type, body: readFileSync(file) }]));
}

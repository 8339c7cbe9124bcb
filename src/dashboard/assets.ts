import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/**
 * The page's files, read once at start. Ours sit in `page/` beside this module (the build
 * and the shims' bundler copy the folder next to their output); uPlot's are resolved as a
 * dependency, so the page needs no network in a checkout and in an installed package alike.
 */
export function loadAssets(): ReadonlyMap<string, Asset> {
  const page = (name: string) => fileURLToPath(new URL(`./page/${name}`, import.meta.url));
  const files: [string, string, string][] = [
    ["/", page("index.html"), "text/html; charset=utf-8"],
    ["/dashboard.js", page("dashboard.js"), "text/javascript; charset=utf-8"],
    ["/dashboard.css", page("dashboard.css"), "text/css; charset=utf-8"],
    ["/uPlot.iife.min.js", uPlotFile("uPlot.iife.min.js"), "text/javascript; charset=utf-8"],
    ["/uPlot.min.css", uPlotFile("uPlot.min.css"), "text/css; charset=utf-8"],
  ];
  return new Map(files.map(([path, file, type]) => [path, { type, body: readFileSync(file) }]));
}

/** A file of uPlot's distribution (the chart library of the dashboard and the report). */
export function uPlotFile(name: "uPlot.iife.min.js" | "uPlot.min.css"): string {
  return createRequire(import.meta.url).resolve(`uplot/dist/${name}`);
}

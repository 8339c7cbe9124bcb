/**
 * The README's "Retries at every layer" figures: examples/three-tiers.yaml run by the simulator,
 * by the demo with real programs, and by choose, recorded in one results file with the commit
 * and machine (src/runtime/provenance.ts); the seeds are in each part. Prints the README's table.
 *
 *   npm run demo -- examples/three-tiers.yaml -out results/three-tiers   (then, with the folder it made:)
 *   node --import ./src/register-tsx.mjs scripts/three-tiers.ts docs/three-tiers.json results/three-tiers/<stamp>
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { provenance } from "../src/runtime/provenance.ts";
import { parseSummary } from "../src/report/summary-file.ts";
import { markdownChainComparison } from "../src/report/tier-table.ts";
import type { TierFigures } from "../src/model/tiers/tier-figures.ts";

const [file, demoDir] = process.argv.slice(2);
if (file === undefined || !file.endsWith(".json") || demoDir === undefined) {
  process.stderr.write("usage: scripts/three-tiers.ts docs/<name>.json <the demo's results folder for examples/three-tiers.yaml>\n");
  process.exit(2);
}
const ROOT = resolve(import.meta.dirname, "..");
const EXAMPLE = "examples/three-tiers.yaml";
const run = (program: string, args: string[]) =>
  execFileSync(process.execPath, ["--import", "./src/register-tsx.mjs", join("src/bin", `${program}.ts`), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
  });

const demo = parseSummary(readFileSync(join(demoDir, "summary.json"), "utf8"));
const demoScenario = (demo.settings.scenario as { file?: string } | undefined)?.file;
if (demoScenario === undefined || !demoScenario.endsWith(EXAMPLE)) throw new Error(`${demoDir}: not a run of ${EXAMPLE}`);
const realRun = demo.results[0];
if (realRun?.tiers === undefined) throw new Error(`${demoDir}: its summary has no tiers`);
const sim = JSON.parse(run("sim", [EXAMPLE, "-json"])) as { tiers: TierFigures[]; seed: number };
const choose = JSON.parse(run("choose", [EXAMPLE, "-json"])) as {
  settings: { seeds: number[] };
  recommendation: { id: string; headline: string; comparison?: string };
  ranking: unknown[];
};

const record = {
  provenance: provenance(),
  example: EXAMPLE,
  commands: {
    sim: `./sim ${EXAMPLE} -json`,
    demo: `npm run demo -- ${EXAMPLE}`,
    choose: `npm run choose -- ${EXAMPLE} -json`,
  },
  sim,
  demo: { provenance: demo.provenance, settings: demo.settings, result: realRun },
  choose: { seeds: choose.settings.seeds, recommendation: choose.recommendation, ranking: choose.ranking },
};
const text = `${JSON.stringify(record, null, 2)}\n`;
writeFileSync(file, text);
process.stdout.write(`${markdownChainComparison(text)}\n`);
process.stdout.write(`\n> ${choose.recommendation.headline}\n`);

/**
 * The README's "Chains of services" figures: examples/three-tiers.yaml run by the simulator,
 * by the demo with real programs, and by choose, recorded in one results file with the commit
 * and machine (src/runtime/provenance.ts); the seeds are in each part. Prints the README's table.
 * It also records choose on two variants of the chain that an expert would check the user-first
 * answer against (docs/choose.md, "A chain"): the same users open loop at the file's normal rate
 * (their requests no longer wait for the chain), and that with a database half as fast.
 *
 *   npm run demo -- examples/three-tiers.yaml -out results/three-tiers   (then, with the folder it made:)
 *   node --import ./src/register-tsx.mjs scripts/three-tiers.ts docs/three-tiers.json results/three-tiers/<stamp>
 *   node --import ./src/register-tsx.mjs scripts/three-tiers.ts docs/three-tiers.json -keep-demo
 *
 * -keep-demo keeps the demo part (and its own provenance) that the results file already holds,
 * and re-records the rest: the real run takes a minute of both cores.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { provenance } from "../src/runtime/provenance.ts";
import { parseSummary } from "../src/report/summary-file.ts";
import { markdownChainComparison } from "../src/report/tier-table.ts";
import type { TierFigures } from "../src/model/tiers/tier-figures.ts";

const [file, demoSource] = process.argv.slice(2);
if (file === undefined || !file.endsWith(".json") || demoSource === undefined) {
  process.stderr.write(
    "usage: scripts/three-tiers.ts docs/<name>.json <the demo's results folder for examples/three-tiers.yaml | -keep-demo>\n",
  );
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

/** The demo's part: from its results folder, or as the results file already holds it. */
function demoPart(): unknown {
  if (demoSource === "-keep-demo") return (JSON.parse(readFileSync(file!, "utf8")) as { demo: unknown }).demo;
  const demo = parseSummary(readFileSync(join(demoSource!, "summary.json"), "utf8"));
  const demoScenario = (demo.settings.scenario as { file?: string } | undefined)?.file;
  if (demoScenario === undefined || !demoScenario.endsWith(EXAMPLE)) throw new Error(`${demoSource}: not a run of ${EXAMPLE}`);
  const realRun = demo.results[0];
  if (realRun?.tiers === undefined) throw new Error(`${demoSource}: its summary has no tiers`);
  return { provenance: demo.provenance, settings: demo.settings, result: realRun };
}

interface ChooseOutput {
  settings: { seeds: number[]; sloMs: number };
  rankingRule: string;
  recommendation: { id: string; headline: string; comparison?: string };
  ranking: unknown[];
}
const choose = (scenario: string, args: string[] = []) => {
  const output = JSON.parse(run("choose", [scenario, ...args, "-json", "-out", scratch])) as ChooseOutput;
  return {
    seeds: output.settings.seeds,
    sloMs: output.settings.sloMs,
    rankingRule: output.rankingRule,
    recommendation: output.recommendation,
    ranking: output.ranking,
  };
};

const scratch = mkdtempSync(join(tmpdir(), "three-tiers-"));
const demo = demoPart();
const sim = JSON.parse(run("sim", [EXAMPLE, "-json"])) as { tiers: TierFigures[]; seed: number };
// The closed loop's users wait for the chain; open-loop users at its normal rate do not.
const rate = Math.round(sim.tiers[0]!.normalArrivalsPerSec!);
const openLoop = ["-arrivals", "open", "-rate", String(rate)];
const SLOW_DB = { from: "threads: 16, service-time: 10ms", to: "threads: 16, service-time: 20ms" };
const slowDb = join(scratch, "three-tiers-slow-db.yaml");
const exampleText = readFileSync(join(ROOT, EXAMPLE), "utf8");
if (!exampleText.includes(SLOW_DB.from)) throw new Error(`${EXAMPLE}: no "${SLOW_DB.from}" to slow the database`);
writeFileSync(slowDb, exampleText.replace(SLOW_DB.from, SLOW_DB.to));
const asGiven = choose(EXAMPLE);
const checks = [
  { name: "open loop", change: `${openLoop.join(" ")} (the normal rate of the file's closed loop)`, args: openLoop, scenario: EXAMPLE },
  {
    name: "open loop, database half as fast",
    change: `${openLoop.join(" ")}, and the db's "${SLOW_DB.from}" made "${SLOW_DB.to}" in a copy of the file`,
    args: openLoop,
    scenario: slowDb,
  },
].map((check) => ({
  name: check.name,
  change: check.change,
  command: `npm run choose -- ${check.scenario === EXAMPLE ? EXAMPLE : "<that copy>"} ${check.args.join(" ")} -json`,
  ...choose(check.scenario, check.args),
}));
rmSync(scratch, { recursive: true, force: true });

const record = {
  provenance: provenance(),
  example: EXAMPLE,
  commands: {
    sim: `./sim ${EXAMPLE} -json`,
    demo: `npm run demo -- ${EXAMPLE}`,
    choose: `npm run choose -- ${EXAMPLE} -json`,
    // The demo's folder is where that run left it (a scratch folder under npm run validate): named, not given.
    record: `node --import ./src/register-tsx.mjs scripts/three-tiers.ts ${file} ${demoSource === "-keep-demo" ? demoSource : "<the demo's results folder>"}`,
  },
  sim,
  demo,
  choose: asGiven,
  chooseChecks: checks,
};
const text = `${JSON.stringify(record, null, 2)}\n`;
writeFileSync(file, text);
process.stdout.write(`${markdownChainComparison(text)}\n`);
process.stdout.write(`\n> ${asGiven.recommendation.headline}\n`);
for (const check of checks) process.stdout.write(`\n${check.name}: ${check.recommendation.headline}\n`);

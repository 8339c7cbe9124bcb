/**
 * The README's "Any system, any trouble" table: each server model with each kind of fault,
 * fixed retry and exponential backoff, one seed, recorded in docs/sim-faults.json with the
 * commit and machine (src/runtime/provenance.ts). Prints the Markdown table for the README.
 *
 *   node --import ./src/register-tsx.mjs scripts/sim-faults.ts docs/sim-faults.json
 */
import { writeFileSync } from "node:fs";
import { provenance } from "../src/runtime/provenance.ts";
import { anchorRun, BROOKER_SPIKE, METASTABLE_CAPACITY_CUT } from "../src/sim/anchors.ts";
import { markdownFaults } from "../src/report/faults-table.ts";

const file = process.argv[2];
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/sim-faults.ts docs/<name>.json\n");
  process.exit(2);
}
const SEED = 1;
const STRATEGIES = ["fixed", "exponential-backoff"];

/** Each model in one system of its own, with when its faults start and how long they last. */
const MODELS = [
  { model: "exponential", args: [] as string[], at: "15s", length: "20s", note: "the article's server and herd (./sim's defaults)" },
  {
    model: "linear",
    args: [...BROOKER_SPIKE.filter((_, index, all) => !isFaultsFlag(all, index))],
    at: "20s",
    length: "5s",
    note: "Brooker's",
  },
  {
    model: "queue",
    args: [...METASTABLE_CAPACITY_CUT.filter((_, index, all) => !isStrategyFlag(all, index))],
    at: "30s",
    length: "10s",
    note: "the OSDI '22 shape",
  },
];
/** Each kind, with its factor. */
const FAULTS = ["stop", "crash", "capacity*0.4", "slow*2.5", "errors*0.5", "spike*2"];

function isFaultsFlag(args: readonly string[], index: number): boolean {
  return args[index] === "-faults" || args[index - 1] === "-faults";
}
function isStrategyFlag(args: readonly string[], index: number): boolean {
  return args[index] === "-strategy" || args[index - 1] === "-strategy";
}

const runs = MODELS.flatMap(({ model, args, at, length }) =>
  FAULTS.map((kind) => {
    const [name, factor] = kind.split("*");
    const fault = `${name}@${at}+${length}${factor === undefined ? "" : `*${factor}`}`;
    const withFault = [...args, "-faults", fault];
    const strategies = STRATEGIES.map((strategy) => {
      const metrics = anchorRun([...withFault, "-strategy", strategy], SEED);
      return { strategy, verdict: metrics.verdict, peakConcurrency: metrics.peakConcurrencyAfterResume, why: metrics.why };
    });
    process.stderr.write(`${model} ${fault}: ${strategies.map((entry) => `${entry.strategy} ${entry.verdict}`).join(", ")}\n`);
    return { model, fault, command: `./sim ${[...withFault, "-strategies", STRATEGIES.join(",")].join(" ")}`, strategies };
  }),
);
const text = `${JSON.stringify({ provenance: provenance(), seed: SEED, models: MODELS, runs }, null, 2)}\n`;
writeFileSync(file, text);
process.stdout.write(`<!-- faults: ${file} -->\n${markdownFaults(text)}\n`);

/**
 * docs/simulator.md's "Any system, any trouble" table: each server model with each kind of fault,
 * fixed retry and exponential backoff, one seed (harness/sim-faults-runs.ts), recorded in
 * docs/sim-faults.json with the commit and machine (src/runtime/provenance.ts). Prints the
 * Markdown table for docs/simulator.md.
 *
 *   node --import ./src/register-tsx.mjs scripts/sim-faults.ts docs/sim-faults.json
 */
import { writeFileSync } from "node:fs";
import { provenance } from "../src/runtime/provenance.ts";
import { markdownFaults } from "../src/report/faults-table.ts";
import { SIM_FAULTS_MODELS, SIM_FAULTS_SEED, simFaultsRuns } from "../harness/sim-faults-runs.ts";

const file = process.argv[2];
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/sim-faults.ts docs/<name>.json\n");
  process.exit(2);
}
const runs = simFaultsRuns((line) => process.stderr.write(`${line}\n`));
const text = `${JSON.stringify({ provenance: provenance(), seed: SIM_FAULTS_SEED, models: SIM_FAULTS_MODELS, runs }, null, 2)}\n`;
writeFileSync(file, text);
process.stdout.write(`<!-- faults: ${file} -->\n${markdownFaults(text)}\n`);

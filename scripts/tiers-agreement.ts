/**
 * The real chain against the simulated one (docs/tiers.md): every case of
 * test/validate/tiers-agreement-runs.ts, run by the demo (real programs) and by ./sim, written
 * with its provenance to docs/tiers-agreement.json, and the table for docs/tiers.md on stdout.
 * About 3 minutes of real time.
 *
 *   node --import ./src/register-tsx.mjs scripts/tiers-agreement.ts [-out docs/tiers-agreement.json] [-note TEXT]
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { provenance } from "../src/runtime/provenance.ts";
import {
  agreementTable,
  CASES,
  type CaseResult,
  PEAK_TOLERANCE,
  runCaseJudged,
  scenarioFile,
  SEED,
} from "../test/validate/tiers-agreement-runs.ts";

const flag = (name: string) => {
  const index = process.argv.indexOf(`-${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
};
const out = flag("out") ?? "docs/tiers-agreement.json";
const note = flag("note");

const started = provenance();
// The machine may be shared: its 1-minute load average at the start and the end says how busy it was.
const loadAtStart = loadavg()[0]!;
const results: CaseResult[] = [];
for (const agreementCase of CASES) {
  const result = await runCaseJudged(agreementCase);
  process.stderr.write(
    `tiers-agreement: ${result.policy} ${result.fault}: ${result.judged ? (result.agrees ? "agrees" : "differs") : "not judged"}; ` +
      `real ${result.real.tiers.map((tier) => `${tier.name} ${tier.verdict} ${tier.peakLoad?.toFixed(2)}x`).join(", ")}; ` +
      `sim ${result.sim.tiers.map((tier) => `${tier.name} ${tier.verdict} ${tier.peakLoad?.toFixed(2)}x`).join(", ")}\n`,
  );
  results.push(result);
}
const record = {
  command: "node --import ./src/register-tsx.mjs scripts/tiers-agreement.ts",
  provenance: started,
  ...(note === undefined ? {} : { note }),
  loadAverage1m: { start: loadAtStart, end: loadavg()[0]! },
  seed: SEED,
  peakTolerance: PEAK_TOLERANCE,
  scenario: scenarioFile(CASES[0]!),
  results,
};
writeFileSync(out, `${JSON.stringify(record, null, 2)}\n`);
process.stdout.write(`${agreementTable(results)}\n`);
const judged = results.filter((result) => result.judged);
process.stderr.write(
  `tiers-agreement: ${judged.filter((result) => result.agrees).length} of ${judged.length} judged cases agree ` +
    `(${results.length - judged.length} not judged); written ${out}\n`,
);

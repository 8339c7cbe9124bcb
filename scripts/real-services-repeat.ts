/**
 * The crash experiment of scripts/real-services.ts repeated where the real service and the
 * simulator disagreed (docs/real-services.md): each case a service of the zoo and a fault, run
 * with each seed, the watcher's answers after the trouble summed up per 10 s beside each run.
 * Each service runs the scenario docs/real-services.json recorded for it (its probed system
 * section), so the prediction is the page's. Writes docs/real-services-repeat.json (commit,
 * machine, load, seeds). About 3.5 minutes a case and seed.
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services-repeat.ts 1,2,3 "gunicorn-sync-backlog-16=spike@15s+10s*3" …
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { writeResultsFile } from "./probe-for-results.ts";
import { demoFlags, onTheRealService, stopOnInterrupt } from "./real-service-runs.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { ZOO } from "../test/helpers/zoo-services.ts";

const FILE = "docs/real-services-repeat.json";
const ZOO_FILE = "docs/real-services.json";

const [seedList, ...caseTexts] = process.argv.slice(2);
const seeds = (seedList ?? "").split(",").map(Number);
const recorded = (JSON.parse(readFileSync(ZOO_FILE, "utf8")) as { services: { name: string; system: object }[] }).services;
const cases = caseTexts.map((text) => {
  const [name, fault] = text.split("=");
  return { entry: ZOO.find((each) => each.name === name), system: recorded.find((service) => service.name === name)?.system, fault };
});
if (
  cases.length === 0 ||
  seeds.some((seed) => !Number.isSafeInteger(seed) || seed < 1) ||
  cases.some((each) => !each.entry || !each.system || !each.fault)
) {
  process.stderr.write(
    `usage: real-services-repeat <seeds, e.g. 1,2,3> <service>=<fault> …; services of ${ZOO_FILE}: ${recorded.map((each) => each.name).join(", ")}\n`,
  );
  process.exit(2);
}

stopOnInterrupt();
const recordedAt = provenance();
const loadBefore = loadavg()[0]!;
const dir = mkdtempSync(join(tmpdir(), "real-services-repeat-"));
const repeated = [];
try {
  for (const [index, { entry, system, fault }] of cases.entries()) {
    const scenarioFile = join(dir, `service-${index}.yaml`);
    writeFileSync(scenarioFile, stringify({ scenario: 1, system }));
    const runs = [];
    for (const seed of seeds)
      runs.push(await onTheRealService(entry!, scenarioFile, fault!, join(dir, `case-${index}-seed-${seed}`), seed));
    repeated.push({ service: entry!.name, fault, system, runs });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
writeResultsFile(FILE, {
  provenance: { ...recordedAt, loadAverage: [Number(loadBefore.toFixed(2)), Number(loadavg()[0]!.toFixed(2))] },
  command: `node --import ./src/register-tsx.mjs scripts/real-services-repeat.ts ${seedList} ${caseTexts.map((text) => `"${text}"`).join(" ")}`,
  demoFlags: demoFlags("<seed>"),
  cases: repeated,
});

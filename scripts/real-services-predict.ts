/**
 * The simulator's predictions of docs/real-services.json, made again by this commit's demo
 * (src/demo/prediction.ts) for the real runs the file recorded: the same scenario (each service's
 * probed system section), users, strategy, fault, phases and seed, read as the watcher reads the
 * real service (src/model/verdict.ts readAsWatcher). After a change to the model or to how a run
 * is judged, the real runs need not be made again: the file gets the new predictions, when and
 * where they were made (`predictedAgain`), and the script prints each one that came out otherwise,
 * the recorded one beside it (the simulator is seeded: at the commit the file records, none does).
 * The first recording's predictions, read from the server's peaks, were so replaced at 2b4bc2f.
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services-predict.ts
 */
import { readFileSync } from "node:fs";
import { writeResultsFile } from "./probe-for-results.ts";
import { DEMO_SEED, demoUsers } from "./real-service-runs.ts";
import { predicted } from "../src/demo/prediction.ts";
import { parseDuration } from "../src/cli/duration.ts";
import { parseFaults } from "../src/model/faults/fault-schedule.ts";
import { provenance } from "../src/runtime/provenance.ts";
import { parseStrategies } from "../src/strategies/runs.ts";

const FILE = "docs/real-services.json";
/** The users' flags the demo ran with (scripts/real-service-runs.ts), which win over the scenario's keys of the same names. */
const USERS = new Set(
  demoUsers(DEMO_SEED)
    .filter((word) => word.startsWith("-"))
    .map((flag) => flag.slice(1)),
);
const OBSERVE_MS = 60_000;

interface Figures {
  verdict: string;
  serverBackMs: number | null;
  clientsBackMs: number | null;
  why: string;
}
interface Strategy {
  strategy: string;
  real: Figures;
  predicted: Figures | { why: string };
}
interface RecordedFile {
  services: { name: string; system: Record<string, unknown>; experiments: { fault: string; seed: number; strategies: Strategy[] }[] }[];
  [key: string]: unknown;
}

const file = JSON.parse(readFileSync(FILE, "utf8")) as RecordedFile;

const changed: string[] = [];
for (const service of file.services) {
  const serverArgs = Object.entries(service.system)
    .filter(([name]) => !USERS.has(name))
    .flatMap(([name, value]) => (value === true ? [`-${name}`] : [`-${name}`, String(value)]));
  for (const experiment of service.experiments) {
    const faults = parseFaults(experiment.fault, parseDuration);
    const troubleMs = Math.max(...faults.map((fault) => fault.atMs + fault.durationMs));
    for (const entry of experiment.strategies) {
      const [strategy] = parseStrategies(entry.strategy);
      const run = {
        serverArgs,
        clientArgs: [...strategy!.clientArgs, ...demoUsers(experiment.seed)],
        steadyMs: faults[0]!.atMs,
        outageMs: 0,
        observeMs: OBSERVE_MS,
        faults: experiment.fault,
        troubleMs,
        seed: experiment.seed,
      };
      const prediction = predicted(run, strategy!);
      if ("why" in prediction) throw new Error(`${service.name} ${experiment.fault} ${entry.strategy}: ${prediction.why}`);
      // Judged as the demo judges it beside the real run (src/demo/prediction.ts): read as the watcher reads the service.
      const { metrics } = prediction.result;
      const again: Figures = {
        verdict: metrics.verdict,
        serverBackMs: metrics.serverRecoveryMs ?? null,
        clientsBackMs: metrics.clientRecoveryMs ?? null,
        why: metrics.why,
      };
      if (JSON.stringify(again) !== JSON.stringify(entry.predicted))
        changed.push(
          `${service.name} ${experiment.fault} ${entry.strategy}: ${JSON.stringify(entry.predicted)} -> ${JSON.stringify(again)}`,
        );
      entry.predicted = again;
    }
  }
}
process.stderr.write(
  changed.length === 0
    ? "real-services-predict: every prediction came out as recorded\n"
    : `real-services-predict: ${changed.length} predictions came out otherwise (recorded -> now):\n${changed.join("\n")}\n`,
);
writeResultsFile(FILE, {
  ...file,
  predictedAgain: {
    ...provenance(),
    command: "node --import ./src/register-tsx.mjs scripts/real-services-predict.ts",
    changed: changed.length,
  },
});

/**
 * The simulator's predictions of docs/real-services.json, made again by this commit's demo
 * (src/demo/prediction.ts) for the real runs the file recorded: the same scenario (each service's
 * probed system section), users, strategy, fault, phases and seed. The simulator is seeded, so the
 * file's own predictions are made again first, read as they were (the server's peaks), and the
 * script stops if any differs; then it writes each prediction read as the watcher reads the real
 * service (src/model/verdict.ts readAsWatcher), keeping the first reading beside it as
 * `predictedFromPeaks`, and when and where it did so as `predictedAgain`.
 *
 *   node --import ./src/register-tsx.mjs scripts/real-services-predict.ts
 */
import { readFileSync } from "node:fs";
import { writeResultsFile } from "./probe-for-results.ts";
import { DEMO_SEED, demoUsers } from "./real-service-runs.ts";
import { predicted } from "../src/demo/prediction.ts";
import { parseDuration } from "../src/cli/duration.ts";
import { parseFaults } from "../src/model/faults/fault-schedule.ts";
import { computeMetrics } from "../src/model/scenario-metrics.ts";
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
  predictedFromPeaks?: Figures | { why: string };
}
interface RecordedFile {
  services: { name: string; system: Record<string, unknown>; experiments: { fault: string; seed: number; strategies: Strategy[] }[] }[];
  [key: string]: unknown;
}

const file = JSON.parse(readFileSync(FILE, "utf8")) as RecordedFile;

const mismatches: string[] = [];
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
      const { server, client, phases, concurrencyLimit } = prediction.result;
      const figures = (readAsWatcher: boolean): Figures => {
        const metrics = computeMetrics(server, client, phases, concurrencyLimit, { readAsWatcher });
        return {
          verdict: metrics.verdict,
          serverBackMs: metrics.serverRecoveryMs ?? null,
          clientsBackMs: metrics.clientRecoveryMs ?? null,
          why: metrics.why,
        };
      };
      const recorded = entry.predictedFromPeaks ?? entry.predicted;
      const again = figures(false);
      if (JSON.stringify(again) !== JSON.stringify(recorded))
        mismatches.push(
          `${service.name} ${experiment.fault} ${entry.strategy}: ${JSON.stringify(again)} against ${JSON.stringify(recorded)}`,
        );
      entry.predictedFromPeaks = recorded;
      entry.predicted = figures(true);
    }
  }
}
if (mismatches.length > 0) {
  process.stderr.write(`real-services-predict: the file's predictions do not come out again:\n${mismatches.join("\n")}\n`);
  process.exit(1);
}
writeResultsFile(FILE, {
  ...file,
  predictedAgain: {
    ...provenance(),
    command: "node --import ./src/register-tsx.mjs scripts/real-services-predict.ts",
    why: "each prediction read as the watcher reads the real service; predictedFromPeaks: as first recorded",
  },
});

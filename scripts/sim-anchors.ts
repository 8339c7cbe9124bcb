/**
 * The anchors of issue 19 reproduced in the simulator, recorded in docs/sim-anchors.json with
 * the commit, seeds and machine (src/runtime/provenance.ts):
 * - Marc Brooker's collapse simulation: each client over ten seeds (no backoff, his backoff
 *   and jitter, full jitter with this library's defaults, and his backoff at smaller bases);
 * - "Metastable Failures in the Wild"'s capacity cut on the queue model: the longest cut the
 *   server survives (the critical search of ./sim -find-critical-outage), and the 9 s and
 *   10 s cuts of the paper.
 *
 *   node --import ./src/register-tsx.mjs scripts/sim-anchors.ts docs/sim-anchors.json
 */
import { writeFileSync } from "node:fs";
import { formatDuration } from "../src/cli/duration.ts";
import { serverIsBack } from "../src/model/verdict.ts";
import { provenance } from "../src/runtime/provenance.ts";
import {
  anchorRun,
  BROOKER_BACKOFF_AND_JITTER,
  BROOKER_NO_BACKOFF,
  BROOKER_SPIKE,
  capacityCut,
  DEFAULT_FULL_JITTER,
  METASTABLE_CAPACITY_CUT,
  simValues,
} from "../src/sim/anchors.ts";
import { bisectCriticalOutage } from "../src/runner/critical-outage.ts";
import { CRITICAL_RESOLUTION_MS, CRITICAL_UPPER_MS, criticalTrouble } from "../src/sim/main.ts";
import { trialMetrics } from "../src/sim/trial.ts";

const file = process.argv[2];
if (file === undefined || !file.endsWith(".json")) {
  process.stderr.write("usage: scripts/sim-anchors.ts docs/<name>.json\n");
  process.exit(2);
}
const SEEDS = Array.from({ length: 10 }, (_, index) => index + 1);
const command = (args: readonly string[]) => `./sim ${args.join(" ")}`;

/** A client over every seed: verdicts, how many recovered, the peak in the server. */
function overSeeds(name: string, args: readonly string[]) {
  const runs = SEEDS.map((seed) => ({ seed, metrics: anchorRun(args, seed) }));
  const row = {
    name,
    command: command(args),
    seeds: SEEDS,
    verdicts: runs.map((run) => run.metrics.verdict),
    serverBack: runs.filter((run) => serverIsBack(run.metrics.verdict)).length,
    peakConcurrency: runs.map((run) => run.metrics.peakConcurrencyAfterResume),
    why: runs[0]!.metrics.why,
  };
  process.stderr.write(`${name}: server back in ${row.serverBack} of ${SEEDS.length} (${row.verdicts.join(", ")})\n`);
  return row;
}

const brookerClients = [
  overSeeds("no backoff (his Client: retries at once)", [...BROOKER_SPIKE, ...BROOKER_NO_BACKOFF]),
  overSeeds("backoff and jitter as published (U(0, 20 s), then U(0, 40 s))", [...BROOKER_SPIKE, ...BROOKER_BACKOFF_AND_JITTER]),
  overSeeds("full jitter, this library's defaults (U(0, 100 ms), then U(0, 200 ms))", [...BROOKER_SPIKE, ...DEFAULT_FULL_JITTER]),
  ...["1s", "5s", "10s"].map((base) =>
    overSeeds(`his backoff and jitter at a first window of ${base}`, [
      ...BROOKER_SPIKE,
      ...["-strategy", "full-jitter", "-min-delay", base, "-max-delay", "40s"],
    ]),
  ),
];

const cutArgs = (length: string) => [...METASTABLE_CAPACITY_CUT, ...capacityCut(length)];
const trouble = criticalTrouble(simValues(cutArgs("10s")));
const search = await bisectCriticalOutage(
  async (lengthMs) => serverIsBack(trialMetrics(trouble.withLength(lengthMs)).verdict),
  () => 1,
  CRITICAL_RESOLUTION_MS,
  CRITICAL_UPPER_MS,
);
const paperCuts = ["9s", "10s"].map((length) => {
  const metrics = anchorRun(cutArgs(length), 1);
  return { length, command: command(cutArgs(length)), verdict: metrics.verdict, why: metrics.why };
});
process.stderr.write(`capacity cut: ${JSON.stringify(search)}; ${paperCuts.map((cut) => `${cut.length} ${cut.verdict}`).join(", ")}\n`);

const recorded = {
  provenance: provenance(),
  brooker: {
    source: "Marc Brooker, simple_collapse_sim, https://github.com/mbrooker/simulator_example",
    // What his simulator's runs show (the post's figures come from them); docs/brooker-python.json counts them.
    published: "no backoff: the server stays down in most runs; backoff with jitter recovers",
    scenario: command(BROOKER_SPIKE),
    clients: brookerClients,
  },
  metastability: {
    source: 'Huang et al., "Metastable Failures in the Wild", OSDI 2022, https://github.com/lexiangh/Metastability',
    published: "a CPU cut to 40 %: metastable after 10 s, recovering after 9 s",
    scenario: command(METASTABLE_CAPACITY_CUT),
    seed: 1,
    criticalSearch: {
      command: `${command(cutArgs("10s"))} -find-critical-outage`,
      result:
        search.kind === "between"
          ? { survivesMs: search.lowMs, collapsesAfterMs: search.highMs, text: formatDuration(search.lowMs) }
          : search,
    },
    paperCuts,
  },
};
writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
process.stderr.write(`wrote ${file}\n`);

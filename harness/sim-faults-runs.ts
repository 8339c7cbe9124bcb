/**
 * docs/simulator.md's "Any system, any trouble" runs: each server model with each kind of fault, fixed
 * retry and exponential backoff, one seed. scripts/sim-faults.ts records them in
 * docs/sim-faults.json; test/unit/harness/seeded-results.test.ts runs them again in `npm test`
 * and holds every figure to that file.
 */
import { anchorRun, BROOKER_SPIKE, METASTABLE_CAPACITY_CUT } from "../src/sim/anchors.ts";

export const SIM_FAULTS_SEED = 1;
const STRATEGIES = ["fixed", "exponential-backoff"];

/** Each model in one system of its own, with when its faults start and how long they last. */
export const SIM_FAULTS_MODELS = [
  { model: "exponential", args: [] as string[], at: "15s", length: "20s", note: "the article's server and herd (./sim's defaults)" },
  {
    model: "linear",
    args: [...BROOKER_SPIKE.filter((_, index, all) => !isFlag("-faults", all, index))],
    at: "20s",
    length: "5s",
    note: "Brooker's",
  },
  {
    model: "queue",
    args: [...METASTABLE_CAPACITY_CUT.filter((_, index, all) => !isFlag("-strategy", all, index))],
    at: "30s",
    length: "10s",
    note: "the OSDI '22 shape",
  },
];
/** Each kind, with its factor. */
const FAULTS = ["stop", "crash", "capacity*0.4", "slow*2.5", "errors*0.5", "spike*2"];

function isFlag(flag: string, args: readonly string[], index: number): boolean {
  return args[index] === flag || args[index - 1] === flag;
}

/** Every model with every fault, both strategies; `progress` hears each row as it is done. */
export function simFaultsRuns(progress: (line: string) => void = () => {}) {
  return SIM_FAULTS_MODELS.flatMap(({ model, args, at, length }) =>
    FAULTS.map((kind) => {
      const [name, factor] = kind.split("*");
      const fault = `${name}@${at}+${length}${factor === undefined ? "" : `*${factor}`}`;
      const withFault = [...args, "-faults", fault];
      const strategies = STRATEGIES.map((strategy) => {
        const metrics = anchorRun([...withFault, "-strategy", strategy], SIM_FAULTS_SEED);
        return { strategy, verdict: metrics.verdict, peakConcurrency: metrics.peakConcurrencyAfterResume, why: metrics.why };
      });
      progress(`${model} ${fault}: ${strategies.map((entry) => `${entry.strategy} ${entry.verdict}`).join(", ")}`);
      return { model, fault, command: `./sim ${[...withFault, "-strategies", STRATEGIES.join(",")].join(" ")}`, strategies };
    }),
  );
}

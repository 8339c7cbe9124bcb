import { serveTasks } from "../runtime/worker-pool.ts";
import type { SimFlagValues } from "../options/sim.ts";
import { runStrategy, type SimRun, type StrategyRunOutput, trialMetrics } from "./trial.ts";

/** A whole strategy run in a worker: its output comes back as text, for the main thread to print in order. */
export interface StrategyRunReply extends StrategyRunOutput {
  readonly stdout: string;
}

/** The simulator's worker thread: runs trials for the main thread's pool. */
export function runWorker(): void {
  serveTasks({
    metrics: (values: SimFlagValues) => trialMetrics(values),
    strategy: ({ values, strategy }: { values: SimFlagValues; strategy: SimRun }): StrategyRunReply => {
      const chunks: string[] = [];
      const output = runStrategy(values, strategy, (text) => chunks.push(text));
      return { ...output, stdout: chunks.join("") };
    },
  });
}

import { serveTasks } from "../runtime/worker-pool.ts";
import { type ChainJob, measureChain } from "../recommend/chain-measure.ts";
import { type MeasureJob, measure, outageTimelines, type SeedResult, type TimelinesJob } from "../recommend/measure.ts";

/**
 * choose's worker thread: measures one candidate with one seed per task (a chain's: one fault schedule too), or plays its
 * listed outages whole for the report's timelines. The everyday
 * latencies, the largest part of a result, move back to the main thread instead of being copied.
 */
export function runWorker(): void {
  serveTasks(
    {
      measure: (job: MeasureJob) => measure(job),
      timelines: (job: TimelinesJob) => outageTimelines(job),
      chain: (job: ChainJob) => measureChain(job),
    },
    (task, output) =>
      task !== "measure"
        ? []
        : [
            (output as SeedResult).everyday.latenciesMs.buffer as ArrayBuffer,
            (output as SeedResult).everyday.retriedLatenciesMs.buffer as ArrayBuffer,
          ],
  );
}

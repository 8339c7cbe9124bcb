import type { OccRun } from "../config/occ-run.ts";
import { averageOccTrials, type OccFigures } from "../model/occ/occ-average.ts";
import { blogPolicy } from "../strategies/blog-backoff.ts";

/*
 * The OCC workload on the virtual clock: the blog's experiment (clients updating one row under
 * optimistic concurrency, each retrying with its backoff) run for every client count and
 * strategy, over the model's seeded trials on its own virtual clock (src/model/occ), each figure
 * their average. It is to the OCC workload what simulate.ts is to the requests: `./sim -workload
 * occ` is its front end; the real programs run the same workload on sockets.
 */

export interface OccSimFigures extends OccFigures {
  readonly strategy: string;
}

/** Every figure of an OCC run, by client count then strategy. */
export function simulateOcc({ runs, counts, settings }: OccRun): OccSimFigures[] {
  return counts.flatMap((clients) =>
    runs.map((run) => ({
      strategy: run.name,
      ...averageOccTrials(
        { clients, policy: blogPolicy(run, settings.baseMs, settings.capMs), network: settings.network, seed: settings.seed },
        settings.trials,
      ),
    })),
  );
}
